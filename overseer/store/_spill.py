"""The spill: audit records kept on disk while the store is down, and the write-ahead log of each process.

- :class:`SpillQueue` is a folder of fsync'd JSON Lines files that :class:`~overseer.store.AuditExporter` appends
  to when the store cannot take a batch, and replays (idempotently) once it can.
- :class:`WriteAheadLog` holds every record a process decided before its verdict returns; the next process to
  open the spill folder adopts the log of a process that is gone, so a killed process loses no decided step.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["SpillQueue", "WriteAheadLog", "default_spill_dir", "is_transient"]

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
