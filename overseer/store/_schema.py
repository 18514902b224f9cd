"""The audit store's tables (SQLAlchemy Core). Migrations in ``migrations/`` create them; a test keeps both in step."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

__all__ = ["metadata", "reviews", "scores", "steps", "tool_pins", "trajectories"]

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "pk": "pk_%(table_name)s",
    }
)

trajectories = Table(
    "trajectories",
    metadata,
    Column("id", String(255), primary_key=True),
    Column("task", Text, nullable=True),
    Column("agent", String(255), nullable=True, index=True),
    Column("model", String(255), nullable=True),
    Column("meta", JSON, nullable=True),
    Column("status", String(32), nullable=False, default="running"),
    Column("policy", String(255), nullable=True),
    Column("started_at", DateTime(timezone=True), nullable=True, index=True),
    Column("ended_at", DateTime(timezone=True), nullable=True),
    Column("n_steps", Integer, nullable=True),
    Column("n_blocked", Integer, nullable=True),
    Column("n_flagged", Integer, nullable=True),
    Column("n_escalated", Integer, nullable=True),
    Column("trace_id", String(32), nullable=True),
)

steps = Table(
    "steps",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("trajectory_id", String(255), nullable=False),
    Column("idx", Integer, nullable=False),
    Column("kind", String(16), nullable=False),
    Column("tool", String(255), nullable=True, index=True),
    Column("call_id", String(255), nullable=True),
    Column("action", String(16), nullable=False, index=True),
    Column("rule", String(255), nullable=True, index=True),
    Column("reason", Text, nullable=False),
    Column("policy", String(255), nullable=False),
    Column("scorer", String(512), nullable=False),
    Column("halt", Boolean, nullable=False, default=False),
    Column("agent", String(255), nullable=True, index=True),
    Column("step", JSON, nullable=False),
    Column("errors", JSON, nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False, index=True),
    Column("latency_ms", Float, nullable=True),
    Column("trace_id", String(32), nullable=True),
    Column("span_id", String(16), nullable=True),
    Column("prev_hash", String(64), nullable=True),
    Column("hash", String(64), nullable=True),
    Column("spans", JSON, nullable=True),
    Index(None, "trajectory_id", "idx"),
)

scores = Table(
    "scores",
    metadata,
    Column("step_id", String(64), primary_key=True),
    Column("name", String(255), primary_key=True),
    Column("value", Float, nullable=False),
    Column("label", String(255), nullable=True),
    Column("explanation", Text, nullable=True),
    Column("scorer", String(255), nullable=False),
)

reviews = Table(
    "reviews",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("step_id", String(64), nullable=False, index=True),
    Column("trajectory_id", String(255), nullable=False, index=True),
    Column("idx", Integer, nullable=False),
    Column("reviewer", String(255), nullable=False),
    Column("reviewer_kind", String(16), nullable=False),
    Column("label", String(64), nullable=False, index=True),
    Column("comment", Text, nullable=True),
    Column("edited", JSON, nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False, index=True),
    Column("prev_hash", String(64), nullable=True),
    Column("hash", String(64), nullable=True),
)

tool_pins = Table(
    "tool_pins",
    metadata,
    Column("server", String(255), primary_key=True),
    Column("tool", String(255), primary_key=True),
    Column("pin", String(64), primary_key=True),
    Column("status", String(16), nullable=False),
    Column("description", Text, nullable=True),
    Column("input_schema", JSON, nullable=True),
    Column("trajectory_id", String(255), nullable=True),
    Column("first_seen", DateTime(timezone=True), nullable=False),
    Column("last_seen", DateTime(timezone=True), nullable=False),
)
"""What an MCP server told a model about each tool (one row per distinct pin): ``accepted`` pins are the baseline
a later session compares with; a ``refused`` one was withheld until a person accepts it (``overseer mcp accept``)."""
