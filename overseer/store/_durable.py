"""Getting audit records into the store without ever dropping one, and without slowing the agent.

- :class:`AuditSpanProcessor` takes each finished overseer span off the agent's thread into a bounded queue; a
  worker thread exports batches. A full queue applies back-pressure for a moment, then spills to disk.
- :class:`AuditExporter` is an OpenTelemetry ``SpanExporter`` that turns spans into audit records and writes
  them to the :class:`~overseer.store.AuditStore`. When the database is down it appends them to a
  :class:`~overseer.store.SpillQueue` on disk (``_spill``) and replays the spill once the database answers again.
  Store writes are idempotent, so a replay never duplicates a row.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Sequence
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from overseer import _semconv as sc
from overseer.store._contract import AuditStore
from overseer.store._records import span_to_record
from overseer.store._spill import SpillQueue, WriteAheadLog, default_spill_dir

__all__ = ["AuditExporter", "AuditSpanProcessor"]

log = logging.getLogger("overseer.audit")

Record = dict[str, Any]


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
                (str(err).splitlines() or [""])[0][:200],  # an error may have no message at all
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
