"""Getting audit records into the store without ever dropping one, and without slowing the agent.

- :class:`AuditSpanProcessor` takes each finished overseer span off the agent's thread into a bounded queue; a
  worker thread exports batches. A full queue applies back-pressure for a moment, then spills to disk.
- :class:`AuditExporter` is an OpenTelemetry ``SpanExporter`` that turns spans into audit records and writes
  them to the :class:`~overseer.store.AuditStore`. When the database is down it appends them to a
  :class:`SpillQueue` on disk and replays the spill once the database answers again. Store writes are
  idempotent, so a replay never duplicates a row.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from overseer import _semconv as sc
from overseer.store._contract import AuditStore
from overseer.store._records import span_to_record

__all__ = ["AuditExporter", "AuditSpanProcessor", "SpillQueue", "WriteAheadLog", "default_spill_dir"]

log = logging.getLogger("overseer.audit")

Record = dict[str, Any]


def default_spill_dir(store_url: str) -> Path:
    """Beside an SQLite file, ``<file>.spill``; otherwise ``.overseer/spill/<store>`` (or ``$OVERSEER_SPILL_DIR/<store>``).

    ``<store>`` is a hash of the store's URL without its password, so a spill is only ever replayed into the store
    its records were meant for, however many stores share a folder.
    """
    if store_url.startswith("sqlite:///") and len(store_url) > len("sqlite:///"):
        if env := os.environ.get("OVERSEER_SPILL_DIR"):
            return Path(env) / _store_key(store_url)
        return Path(store_url[len("sqlite:///") :] + ".spill")
    root = Path(os.environ.get("OVERSEER_SPILL_DIR") or Path(".overseer") / "spill")
    return root / _store_key(store_url)


def _store_key(store_url: str) -> str:
    """A short, stable name for a store: a hash of its URL with any password removed."""
    import hashlib
    import re

    bare = re.sub(r"(://[^:/@]+):[^@/]*@", r"\1@", store_url)
    return "store-" + hashlib.sha256(bare.encode()).hexdigest()[:16]


def is_transient(err: BaseException) -> bool:
    """Whether a store error means "not now" (down, unreachable, locked, full) rather than "not this record"."""
    from sqlalchemy.exc import DisconnectionError, InterfaceError, OperationalError
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    from overseer.exceptions import StoreError

    return isinstance(err, OperationalError | InterfaceError | DisconnectionError | PoolTimeout | OSError | StoreError)


class SpillQueue:
    """Audit records kept on disk (JSON Lines, fsynced) until the store takes them.

    Each process appends to its own file; a replay claims a file by renaming it, so several processes sharing a
    spill folder never replay the same file twice. Files left by a process that died are replayed by the next.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self._lock = threading.Lock()
        self._file: Any = None
        self._path: Path | None = None

    def append(self, records: Sequence[Record]) -> None:
        """Write records durably (the call returns once they are on disk)."""
        if not records:
            return
        data = "".join(json.dumps(r, separators=(",", ":"), default=str) + "\n" for r in records).encode()
        with self._lock:
            if self._file is None:
                self.directory.mkdir(parents=True, exist_ok=True)
                self._path = self.directory / f"spill-{os.getpid()}-{uuid.uuid4().hex[:8]}.jsonl"
                self._file = open(self._path, "ab")  # noqa: SIM115 - kept open across appends
            self._file.write(data)
            self._file.flush()
            os.fsync(self._file.fileno())

    def _rotate(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def pending(self) -> bool:
        """Whether any spilled records wait for replay."""
        return self.directory.is_dir() and any(self.directory.glob("spill-*.jsonl"))

    def count(self) -> int:
        """How many records wait for replay (reads the files)."""
        if not self.directory.is_dir():
            return 0
        total = 0
        for path in self.directory.glob("spill-*.jsonl"):
            with open(path, "rb") as fh:
                total += sum(1 for line in fh if line.strip())
        return total

    def replay(self, write: Callable[[list[Record]], None], batch_size: int = 500) -> int:
        """Hand every spilled record to ``write`` in batches; a file is deleted once all of it is written.

        Raises whatever ``write`` raises; the file being replayed then stays for the next attempt.
        """
        self._rotate()
        if not self.directory.is_dir():
            return 0
        written = 0
        for path in sorted(self.directory.glob("spill-*.jsonl")):
            claimed = path.with_name(f"replaying-{os.getpid()}-{uuid.uuid4().hex[:8]}-{path.name}")
            try:
                path.rename(claimed)
            except FileNotFoundError:
                continue  # another process claimed it
            try:
                records = self._read(claimed)
                for start in range(0, len(records), batch_size):
                    self._write_or_reject(write, records[start : start + batch_size], path)
            except BaseException:
                claimed.rename(path)
                raise
            claimed.unlink()
            written += len(records)
        return written

    def _write_or_reject(self, write: Callable[[list[Record]], None], batch: list[Record], source: Path) -> None:
        """Write a batch, or, when the store refuses it for its content (not for being down), record by record.

        Each record the store refuses is set aside in ``rejected-*.jsonl`` beside the spill, with the error: a
        poison record must not hold back every record after it.
        """
        try:
            write(batch)
            return
        except Exception as err:
            if is_transient(err):
                raise
        for record in batch:
            try:
                write([record])
            except Exception as err:
                if is_transient(err):
                    raise
                rejected = self.directory / f"rejected-{source.name}"
                with open(rejected, "ab") as out:
                    out.write((json.dumps({"error": f"{type(err).__name__}: {err}"[:1000], "record": record},
                                          default=str) + "\n").encode())  # fmt: skip
                log.error("the audit store refused a record (%s); kept in %s", type(err).__name__, rejected)

    @staticmethod
    def _read(path: Path) -> list[Record]:
        records: list[Record] = []
        with open(path, "rb") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    records.append(json.loads(line))
                except ValueError:  # a line torn by a crash mid-write: keep it aside, never silently
                    corrupt = path.with_name(path.name + ".corrupt")
                    with open(corrupt, "ab") as out:
                        out.write(line)
                    log.error("audit spill %s line %d is torn; kept in %s", path, lineno, corrupt)
        return records

    def close(self) -> None:
        """Close the current spill file."""
        self._rotate()


class WriteAheadLog:
    """Each audit record, appended to a local file before the step's verdict is returned.

    A process killed outright (SIGKILL, OOM) loses what its memory held, not what it handed to the kernel: the
    next process that opens the spill folder finds the dead process's log and replays it like a spill. Records
    are written without fsync (a killed process does not need one; a machine crash may lose the last moments).
    The log rolls over in segments; a segment is deleted once every record in it is in the store or the spill.
    """

    def __init__(self, directory: str | Path, segment_records: int = 5000) -> None:
        self.directory = Path(directory)
        self.segment_records = segment_records
        self._lock = threading.Lock()
        self._file: Any = None
        self._path: Path | None = None
        self._seq = 0
        self._segments: list[tuple[int, Path]] = []
        """Closed segments and the sequence number of their last record."""
        self._in_segment = 0

    def append(self, record: Record) -> int:
        """Write one record; returns its sequence number."""
        line = (json.dumps(record, separators=(",", ":"), default=str) + "\n").encode()
        with self._lock:
            if self._file is None:
                self.directory.mkdir(parents=True, exist_ok=True)
                self._path = self.directory / f"wal-{os.getpid()}-{uuid.uuid4().hex[:8]}.jsonl"
                self._file = open(self._path, "ab", buffering=0)  # noqa: SIM115 - kept open across appends
                self._in_segment = 0
            self._file.write(line)
            self._seq += 1
            self._in_segment += 1
            if self._in_segment >= self.segment_records:
                self._file.close()
                assert self._path is not None
                self._segments.append((self._seq, self._path))
                self._file = None
            return self._seq

    def done(self, seq: int) -> None:
        """Every record up to ``seq`` is in the store or the spill: drop the segments that hold only those."""
        with self._lock:
            while self._segments and self._segments[0][0] <= seq:
                _, path = self._segments.pop(0)
                path.unlink(missing_ok=True)
            if seq >= self._seq and self._file is not None and self._in_segment:
                self._file.truncate(0)  # unbuffered, opened for append: the next write starts the file anew
                self._in_segment = 0

    def close(self) -> None:
        """Close and remove the log (call only once everything in it is in the store or the spill)."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
            for _, path in self._segments:
                path.unlink(missing_ok=True)
            self._segments.clear()
            if self._path is not None:
                self._path.unlink(missing_ok=True)
                self._path = None

    @staticmethod
    def adopt_orphans(directory: str | Path) -> int:
        """Turn the logs of processes that are gone into spill files (replayed like any spill); returns how many."""
        folder = Path(directory)
        if not folder.is_dir():
            return 0
        adopted = 0
        for path in folder.glob("wal-*.jsonl"):
            try:
                pid = int(path.name.split("-")[1])
            except (IndexError, ValueError):
                continue
            if pid == os.getpid() or _alive(pid):
                continue
            try:
                path.rename(path.with_name("spill-" + path.name))
                adopted += 1
            except FileNotFoundError:
                continue  # another process adopted it first
        if adopted:
            log.warning("found %d audit log(s) of processes that died; replaying them", adopted)
        return adopted


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class AuditExporter(SpanExporter):
    """Exports overseer spans into an :class:`AuditStore`, spilling to disk while the store is unavailable."""

    def __init__(self, store: AuditStore, spill: SpillQueue | None = None, *, retry_interval_s: float = 2.0) -> None:
        self.store = store
        self.spill = spill or SpillQueue(default_spill_dir(store.url))
        self.retry_interval_s = retry_interval_s
        self.degraded = False
        """Whether the store failed its last write: new records go to the spill until a replay succeeds."""
        self._next_retry = 0.0
        self.stats = {"written": 0, "spilled": 0, "replayed": 0, "store_errors": 0}

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Write the spans' audit records to the store, or to the spill; FAILURE only if both fail."""
        records = [r for r in (span_to_record(s) for s in spans) if r is not None]
        return self.write(records)

    def write(self, records: list[Record]) -> SpanExportResult:
        """Write records to the store, or to the spill while the store is unavailable."""
        if not records:
            return SpanExportResult.SUCCESS
        if self.degraded and time.monotonic() >= self._next_retry:
            self.retry()
        if not self.degraded:
            try:
                self.store.write(records)
                self.stats["written"] += len(records)
                return SpanExportResult.SUCCESS
            except Exception as err:  # the database is down, slow or full: spill, never drop
                self._fail(err)
        try:
            self.spill.append(records)
            self.stats["spilled"] += len(records)
            return SpanExportResult.SUCCESS
        except OSError as err:
            log.error("audit spill to %s failed (%s); the records stay queued in memory", self.spill.directory, err)
            return SpanExportResult.FAILURE

    def _fail(self, err: Exception) -> None:
        self.stats["store_errors"] += 1
        if not self.degraded:
            log.warning(
                "audit store %r unavailable (%s: %s); spilling to %s",
                self.store,
                type(err).__name__,
                str(err).splitlines()[0][:200],
                self.spill.directory,
            )
        self.degraded = True
        self._next_retry = time.monotonic() + self.retry_interval_s

    def retry(self) -> bool:
        """Replay the spill into the store; True when nothing is left spilled."""
        try:
            replayed = self.spill.replay(self.store.write)
        except Exception as err:
            self._fail(err)
            return False
        self.stats["replayed"] += replayed
        if self.degraded:
            log.warning("audit store %r is back; replayed %d spilled records", self.store, replayed)
        self.degraded = False
        return True

    def due(self) -> bool:
        """Whether a replay is worth trying now."""
        return (self.degraded and time.monotonic() >= self._next_retry) or (not self.degraded and self.spill.pending())

    def shutdown(self) -> None:
        """Try a last replay, then close the spill file."""
        if self.spill.pending():
            self.retry()
        self.spill.close()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered here."""
        return True


_STOP = object()


class AuditSpanProcessor(SpanProcessor):
    """Hands finished overseer spans to an :class:`AuditExporter` on a worker thread; never drops one.

    ``on_end`` runs on the agent's thread and only enqueues. When the queue is full it waits up to
    ``block_s`` (back-pressure), then spills the span's record to disk itself.
    """

    def __init__(
        self,
        exporter: AuditExporter,
        *,
        max_queue: int = 20_000,
        max_batch: int = 512,
        delay_s: float = 0.2,
        block_s: float = 1.0,
        write_ahead: bool = True,
    ) -> None:
        self.exporter = exporter
        self.max_batch = max_batch
        self.delay_s = delay_s
        self.block_s = block_s
        self._queue: queue.Queue[Any] = queue.Queue(max_queue)
        self._wake = threading.Event()
        self._stopped = False
        self.overflowed = 0
        """How many records the agent's thread spilled itself because the queue stayed full."""
        self.wal: WriteAheadLog | None = WriteAheadLog(exporter.spill.directory) if write_ahead else None
        """Where each record goes before its verdict is returned, so a killed process loses none."""
        WriteAheadLog.adopt_orphans(exporter.spill.directory)
        self._worker = threading.Thread(target=self._run, name="overseer-audit", daemon=True)
        self._worker.start()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Nothing to do when a span starts."""

    def on_end(self, span: ReadableSpan) -> None:
        """Log an overseer span's record ahead and queue it for export (other spans are ignored)."""
        if not span.attributes or sc.RECORD not in span.attributes:
            return
        record = span_to_record(span)
        if record is None:
            return
        if self._stopped:
            self._export_now([record])
            return
        seq = 0
        if self.wal is not None:
            try:
                seq = self.wal.append(record)
            except OSError as err:
                log.error("audit write-ahead log failed (%s); a killed process may lose queued records", err)
                self.wal = None
        try:
            self._queue.put((seq, record), timeout=self.block_s)
        except queue.Full:
            self.overflowed += 1
            try:
                self.exporter.spill.append([record])
                self.exporter.stats["spilled"] += 1
            except OSError:
                log.exception("audit queue full and spill failed; exporting on the caller's thread")
                self._export_now([record])

    def _export_now(self, records: list[Record]) -> None:
        delay = 0.1
        while self.exporter.write(records) is SpanExportResult.FAILURE:
            time.sleep(delay)  # neither the store nor the disk takes it: hold on to it and keep trying
            delay = min(delay * 2, 5.0)

    def _collect(self) -> tuple[list[tuple[int, Record]], list[threading.Event], bool]:
        """Wait for work; let a batch gather for ``delay_s`` (a flush cuts that short); then take it in one go.

        Sleeping instead of waking on every span keeps the worker off the agent's CPU (and the GIL) while
        steps are being decided.
        """
        batch: list[tuple[int, Record]] = []
        waiters: list[threading.Event] = []
        try:
            item = self._queue.get(timeout=min(self.exporter.retry_interval_s, 1.0))
        except queue.Empty:
            return batch, waiters, False
        if not isinstance(item, threading.Event) and item is not _STOP and self._queue.qsize() < self.max_batch:
            self._wake.wait(self.delay_s)  # a backlog is taken at once; only a trickle waits to form a batch
        self._wake.clear()
        stop = False
        while item is not None:
            if item is _STOP:
                stop = True
            elif isinstance(item, threading.Event):
                waiters.append(item)
            else:
                batch.append(item)
            if len(batch) >= self.max_batch:
                break
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                item = None
        return batch, waiters, stop

    def _run(self) -> None:
        while True:
            batch, waiters, stop = self._collect()
            if stop:  # drain what is left behind the stop marker's predecessors
                while True:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if isinstance(item, threading.Event):
                        waiters.append(item)
                    elif item is not _STOP:
                        batch.append(item)
            while True:
                try:
                    if batch:
                        self._export_now([record for _, record in batch])
                        if self.wal is not None:
                            self.wal.done(batch[-1][0])
                    elif self.exporter.due():
                        self.exporter.retry()
                    break
                except Exception:  # an observer never breaks the host: log, keep the records, try again
                    log.exception("audit export failed unexpectedly; %d records kept for retry", len(batch))
                    time.sleep(0.5)
            for waiter in waiters:
                waiter.set()
            if stop:
                return

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Wait until every span queued so far is in the store or the spill."""
        if self._stopped:
            return True
        done = threading.Event()
        try:
            self._queue.put(done, timeout=timeout_millis / 1000)
        except queue.Full:
            return False
        self._wake.set()
        return done.wait(timeout_millis / 1000)

    def shutdown(self) -> None:
        """Flush, stop the worker, and let the exporter make a last replay."""
        if self._stopped:
            return
        self._queue.put(_STOP)
        self._wake.set()
        self._worker.join()
        self._stopped = True
        self.exporter.shutdown()
        if self.wal is not None:
            self.wal.close()
