"""The audit store and the path that fills it: spans -> exporter -> SQL, with a spill to disk when the database is down."""

from overseer.store._chain import ChainProblem, genesis, link, review_content, step_content
from overseer.store._durable import AuditExporter, AuditSpanProcessor, SpillQueue, default_spill_dir
from overseer.store._pins import ToolPin
from overseer.store._records import span_to_record
from overseer.store._store import (
    DEFAULT_STORE_URL,
    AuditStore,
    StoredScore,
    StoredStep,
    StoredTrajectory,
    default_store_url,
)

__all__ = [
    "ChainProblem",
    "DEFAULT_STORE_URL",
    "AuditExporter",
    "AuditSpanProcessor",
    "AuditStore",
    "SpillQueue",
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
