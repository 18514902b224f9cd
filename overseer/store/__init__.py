"""The audit store and the path that fills it: spans -> exporter -> store, with a spill to disk when it is down.

``AuditStore(url)`` is the contract and opens a backend: :class:`SqlAuditStore` (SQLite, PostgreSQL) or
:class:`MemoryAuditStore` (``memory://NAME``, for tests).
"""

from overseer.store._chain import ChainProblem, genesis, link, review_content, step_content
from overseer.store._contract import (
    DEFAULT_STORE_URL,
    AuditStore,
    StoredScore,
    StoredStep,
    StoredTrajectory,
    default_store_url,
)
from overseer.store._durable import AuditExporter, AuditSpanProcessor
from overseer.store._memory import MemoryAuditStore
from overseer.store._pins import ToolPin
from overseer.store._records import span_to_record
from overseer.store._spill import SpillQueue, default_spill_dir
from overseer.store._store import SqlAuditStore

__all__ = [
    "ChainProblem",
    "DEFAULT_STORE_URL",
    "AuditExporter",
    "AuditSpanProcessor",
    "AuditStore",
    "MemoryAuditStore",
    "SpillQueue",
    "SqlAuditStore",
    "StoredScore",
    "StoredStep",
    "StoredTrajectory",
    "ToolPin",
    "default_spill_dir",
    "default_store_url",
    "genesis",
    "link",
    "review_content",
    "span_to_record",
    "step_content",
]
