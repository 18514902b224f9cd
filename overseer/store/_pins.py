"""Tool pins in the audit store: the baseline an MCP session's tool list is compared with.

Trust on first use, as mcp-scan does: the first pin seen of a (server, tool) is ``accepted``. A later pin that a
policy lets through (the ``tool_change`` step was allowed) is accepted too and becomes the baseline; one the policy
refused is kept as ``refused`` and the tool stays withheld in every session until a person accepts it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy import select, update

from overseer.exceptions import StoreError
from overseer.store import _schema as t

__all__ = ["PinStatus", "ToolPin", "accept_pin", "baseline", "list_pins", "record_pin"]

PinStatus = Literal["accepted", "refused"]


@dataclass(frozen=True)
class ToolPin:
    """One distinct version of what a server said about a tool."""

    server: str
    tool: str
    pin: str
    status: PinStatus
    description: str | None = None
    input_schema: Any = None
    trajectory_id: str | None = None
    """The session (trajectory) in which this version was first seen."""
    first_seen: datetime | None = None
    last_seen: datetime | None = None


def _utc(value: datetime | None) -> datetime | None:
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


def _row(r: Any) -> ToolPin:
    return ToolPin(
        server=r.server,
        tool=r.tool,
        pin=r.pin,
        status=r.status,
        description=r.description,
        input_schema=r.input_schema,
        trajectory_id=r.trajectory_id,
        first_seen=_utc(r.first_seen),
        last_seen=_utc(r.last_seen),
    )


def baseline(engine: Any, server: str, tool: str) -> ToolPin | None:
    """The accepted version of a tool seen last, or ``None`` for a tool never seen."""
    q = (
        select(t.tool_pins)
        .where(t.tool_pins.c.server == server, t.tool_pins.c.tool == tool, t.tool_pins.c.status == "accepted")
        .order_by(t.tool_pins.c.last_seen.desc())
        .limit(1)
    )
    with engine.connect() as conn:
        found = conn.execute(q).first()
    return _row(found) if found is not None else None


def record_pin(engine: Any, pin: ToolPin) -> None:
    """Insert a version, or mark a known one seen now; ``accepted`` overrides ``refused``, never the reverse."""
    now = datetime.now(UTC)
    key = (t.tool_pins.c.server == pin.server, t.tool_pins.c.tool == pin.tool, t.tool_pins.c.pin == pin.pin)
    with engine.begin() as conn:
        known = conn.execute(select(t.tool_pins.c.status).where(*key)).first()
        if known is None:
            conn.execute(
                t.tool_pins.insert().values(
                    server=pin.server,
                    tool=pin.tool,
                    pin=pin.pin,
                    status=pin.status,
                    description=pin.description,
                    input_schema=pin.input_schema,
                    trajectory_id=pin.trajectory_id,
                    first_seen=now,
                    last_seen=now,
                )
            )
        else:
            status = "accepted" if "accepted" in (known.status, pin.status) else pin.status
            conn.execute(update(t.tool_pins).where(*key).values(last_seen=now, status=status))


def list_pins(engine: Any, server: str | None = None, tool: str | None = None) -> list[ToolPin]:
    """Every version seen, by server and tool, oldest first."""
    q = select(t.tool_pins)
    if server is not None:
        q = q.where(t.tool_pins.c.server == server)
    if tool is not None:
        q = q.where(t.tool_pins.c.tool == tool)
    with engine.connect() as conn:
        rows = conn.execute(q.order_by(t.tool_pins.c.server, t.tool_pins.c.tool, t.tool_pins.c.first_seen)).all()
    return [_row(r) for r in rows]


def accept_pin(engine: Any, server: str, tool: str, pin: str | None = None) -> ToolPin:
    """Accept a refused version (the newest one, or ``pin``): it becomes the baseline, seen now.

    Raises:
        StoreError: no such refused version.
    """
    refused = [p for p in list_pins(engine, server, tool) if p.status == "refused" and (pin is None or p.pin == pin)]
    if not refused:
        what = f"version {pin} of " if pin else ""
        raise StoreError(f"no refused {what}tool {tool!r} of server {server!r} in the store (see `overseer mcp pins`)")
    chosen = max(refused, key=lambda p: p.last_seen or datetime.min.replace(tzinfo=UTC))
    record_pin(engine, ToolPin(server, tool, chosen.pin, "accepted"))
    return baseline(engine, server, tool) or chosen
