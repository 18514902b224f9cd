"""The SQL audit store: SQLite embedded by default, PostgreSQL by URL. Writes are idempotent; reads serve the CLI.

The contract it implements (and what it shares with every backend) is :class:`~overseer.store.AuditStore`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, func, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from overseer.exceptions import MissingDependencyError, StoreError
from overseer.steps import Review, step_adapter
from overseer.store import _pins
from overseer.store import _schema as t
from overseer.store._contract import AuditStore, StoredScore, StoredStep, StoredTrajectory, default_store_url
from overseer.store._pins import ToolPin
from overseer.store._rows import rows

__all__ = ["SqlAuditStore"]


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _from_ns(ns: int | None) -> datetime | None:
    return None if ns is None else datetime.fromtimestamp(ns / 1e9, tz=UTC)


def _mask(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


class SqlAuditStore(AuditStore):
    """The audit store in a SQL database at a SQLAlchemy URL. Opening it runs the migrations.

    ``postgresql://`` URLs use psycopg 3 (the ``postgres`` extra). A relative SQLite path is relative to the
    working directory; its folder is created.
    """

    def __init__(self, url: str | None = None, *, migrate: bool = True, connect_timeout_s: float = 5.0) -> None:
        self.url = url or default_store_url()
        self.engine = self._engine(self.url, connect_timeout_s)
        self._insert = self._insert_fn()
        self.migrated = False
        """Whether the schema is known to be current (``write`` migrates first when it is not)."""
        if migrate:
            try:
                self.migrate()
            except BaseException:
                self.engine.dispose()
                raise

    def __repr__(self) -> str:
        return f"SqlAuditStore({_mask(self.url)!r})"

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.engine.dialect.name

    @staticmethod
    def _engine(url: str, connect_timeout_s: float) -> Engine:
        try:
            parsed = make_url(url)
        except ArgumentError as err:
            raise StoreError(f"not a database URL: {url!r} ({err})") from None
        if parsed.drivername in ("postgresql", "postgres"):
            parsed = parsed.set(drivername="postgresql+psycopg")
        backend = parsed.get_backend_name()
        if backend == "sqlite":
            database = parsed.database or ""
            if database and database != ":memory:" and not database.startswith("file:"):
                folder = Path(database).parent
                if folder.parts[:1] == (".overseer",):
                    folder.mkdir(parents=True, exist_ok=True)  # overseer's own folder in the working directory
                elif not folder.is_dir():  # a typo in a path must not quietly create folders elsewhere
                    raise StoreError(f"no folder {str(folder)!r} for the SQLite database {database!r}")
            kwargs: dict[str, Any] = {"connect_args": {"timeout": 30, "check_same_thread": False}}
            if not database or database == ":memory:":
                kwargs["poolclass"] = StaticPool
            engine = create_engine(parsed, **kwargs)

            @event.listens_for(engine, "connect")
            def _pragmas(dbapi_conn: Any, _record: Any) -> None:
                cursor = dbapi_conn.cursor()
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")
                cursor.execute("PRAGMA busy_timeout=30000")
                cursor.close()

            return engine
        if backend == "postgresql":
            try:
                return create_engine(
                    parsed,
                    pool_pre_ping=True,
                    connect_args={"connect_timeout": max(1, int(connect_timeout_s))},
                )
            except (ModuleNotFoundError, NoSuchModuleError):
                raise MissingDependencyError("a PostgreSQL audit store", "postgres") from None
        raise StoreError(f"unsupported database {backend!r} in {_mask(url)}: use sqlite:/// or postgresql://")

    def migrate(self) -> None:
        """Bring the schema to the newest migration (safe to run from several processes)."""
        from alembic import command
        from alembic.config import Config
        from alembic.runtime.migration import MigrationContext
        from alembic.script import ScriptDirectory

        config = Config()
        config.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
        head = ScriptDirectory.from_config(config).get_current_head()
        try:
            with self.engine.begin() as conn:
                if MigrationContext.configure(conn).get_current_revision() != head:
                    config.attributes["connection"] = conn
                    command.upgrade(config, "head")
            self.migrated = True
            return
        except SQLAlchemyError as err:
            try:
                with self.engine.connect() as conn:  # another process may have migrated meanwhile
                    if MigrationContext.configure(conn).get_current_revision() == head:
                        self.migrated = True
                        return
            except SQLAlchemyError:
                pass
            raise StoreError(
                f"cannot open the audit store {_mask(self.url)}: {err.__class__.__name__}: {err}"
            ) from None

    def _insert_fn(self) -> Any:
        if self.dialect == "sqlite":
            from sqlalchemy.dialects import sqlite

            return sqlite.insert
        from sqlalchemy.dialects import postgresql

        return postgresql.insert

    def write(self, records: Sequence[dict[str, Any]]) -> None:
        """Write audit records in one transaction. Writing a record twice changes nothing (no duplicates).

        Raises:
            sqlalchemy.exc.SQLAlchemyError: the database is unreachable or refuses the write.
        """
        if not self.migrated:
            self.migrate()
        steps, scores, started, reviews, ended = rows(records)
        insert = self._insert
        with self.engine.begin() as conn:
            if steps:
                conn.execute(insert(t.steps).on_conflict_do_nothing(index_elements=["id"]), steps)
            if scores:
                conn.execute(insert(t.scores).on_conflict_do_nothing(index_elements=["step_id", "name"]), scores)
            if started:
                conn.execute(insert(t.trajectories).on_conflict_do_nothing(index_elements=["id"]), started)
            if reviews:
                conn.execute(insert(t.reviews).on_conflict_do_nothing(index_elements=["id"]), reviews)
            for row in ended:
                stmt = insert(t.trajectories).values(**row)
                update = {k: stmt.excluded[k] for k in row if k not in ("id", "started_at", "trace_id")}
                conn.execute(stmt.on_conflict_do_update(index_elements=["id"], set_=update))

    # --- reading -------------------------------------------------------------------------------------------

    def _scores_for(self, conn: Any, step_ids: Iterable[str]) -> dict[str, list[StoredScore]]:
        ids = list(step_ids)
        out: dict[str, list[StoredScore]] = {i: [] for i in ids}
        for start in range(0, len(ids), 500):
            rows = conn.execute(select(t.scores).where(t.scores.c.step_id.in_(ids[start : start + 500])))
            for row in rows:
                out[row.step_id].append(
                    StoredScore(
                        name=row.name,
                        value=row.value,
                        scorer=row.scorer,
                        label=row.label,
                        explanation=row.explanation,
                    )
                )
        return out

    @staticmethod
    def _step(row: Any, scores: list[StoredScore]) -> StoredStep:
        step_json = row.step if isinstance(row.step, dict) else json.loads(row.step)
        return StoredStep(
            id=row.id,
            trajectory_id=row.trajectory_id,
            index=row.idx,
            kind=row.kind,
            tool=row.tool,
            call_id=row.call_id,
            action=row.action,
            rule=row.rule,
            reason=row.reason,
            policy=row.policy,
            scorer=row.scorer,
            halt=bool(row.halt),
            agent=row.agent,
            step=step_adapter.validate_python(step_json),
            errors=row.errors,
            created_at=_utc(row.created_at) or datetime.now(UTC),
            latency_ms=row.latency_ms,
            scores=tuple(sorted(scores, key=lambda s: s.name)),
            spans=tuple((int(a), int(b)) for a, b in row.spans) if row.spans is not None else None,
        )

    def list_steps(
        self,
        *,
        actions: Sequence[str] | None = None,
        rule: str | None = None,
        agent: str | None = None,
        tool: str | None = None,
        trajectory_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int | None = 50,
        offset: int = 0,
        newest_first: bool = True,
        unreviewed: bool = False,
    ) -> list[StoredStep]:
        """Stored steps matching every given filter (``unreviewed``: steps that no review judges yet)."""
        q = select(t.steps)
        if unreviewed:
            q = q.where(~select(t.reviews.c.id).where(t.reviews.c.step_id == t.steps.c.id).exists())
        if actions:
            q = q.where(t.steps.c.action.in_(list(actions)))
        if rule is not None:
            q = q.where(t.steps.c.rule == rule)
        if agent is not None:
            q = q.where(t.steps.c.agent == agent)
        if tool is not None:
            q = q.where(t.steps.c.tool == tool)
        if trajectory_id is not None:
            q = q.where(t.steps.c.trajectory_id == trajectory_id)
        if since is not None:
            q = q.where(t.steps.c.created_at >= since)
        if until is not None:
            q = q.where(t.steps.c.created_at < until)
        order = [t.steps.c.created_at, t.steps.c.trajectory_id, t.steps.c.idx]
        q = q.order_by(*(c.desc() for c in order) if newest_first else order).offset(offset)
        if limit is not None:
            q = q.limit(limit)
        with self._reading() as conn:
            rows = list(conn.execute(q))
            scores = self._scores_for(conn, (r.id for r in rows))
        return [self._step(r, scores[r.id]) for r in rows]

    def get_step(self, step_id: str) -> StoredStep | None:
        """One stored step by its id."""
        with self._reading() as conn:
            row = conn.execute(select(t.steps).where(t.steps.c.id == step_id)).first()
            if row is None:
                return None
            scores = self._scores_for(conn, [row.id])
        return self._step(row, scores[row.id])

    def has_trajectory(self, trajectory_id: str) -> bool:
        """Whether the store holds a trajectory (or a step of one) with this id."""
        with self._reading() as conn:
            found = conn.execute(select(t.trajectories.c.id).where(t.trajectories.c.id == trajectory_id)).first()
            if found is None:
                found = conn.execute(
                    select(t.steps.c.id).where(t.steps.c.trajectory_id == trajectory_id).limit(1)
                ).first()
        return found is not None

    def get_trajectory(self, trajectory_id: str) -> tuple[StoredTrajectory, list[StoredStep]] | None:
        """A trajectory and its steps in order, or ``None`` when the store has neither."""
        with self._reading() as conn:
            row = conn.execute(select(t.trajectories).where(t.trajectories.c.id == trajectory_id)).first()
            step_rows = list(
                conn.execute(select(t.steps).where(t.steps.c.trajectory_id == trajectory_id).order_by(t.steps.c.idx))
            )
            scores = self._scores_for(conn, (r.id for r in step_rows))
        if row is None and not step_rows:
            return None
        steps = [self._step(r, scores[r.id]) for r in step_rows]
        trajectory = (
            self._trajectory(row)
            if row is not None
            else StoredTrajectory(id=trajectory_id, task=None, agent=steps[0].agent, model=None)
        )
        return trajectory, steps

    @staticmethod
    def _trajectory(row: Any) -> StoredTrajectory:
        return StoredTrajectory(
            id=row.id,
            task=row.task,
            agent=row.agent,
            model=row.model,
            metadata=row.meta or {},
            status=row.status,
            policy=row.policy,
            started_at=_utc(row.started_at),
            ended_at=_utc(row.ended_at),
            n_steps=row.n_steps,
            n_blocked=row.n_blocked,
            n_flagged=row.n_flagged,
            n_escalated=row.n_escalated,
        )

    def list_trajectories(
        self, *, agent: str | None = None, status: str | None = None, limit: int | None = 50
    ) -> list[StoredTrajectory]:
        """Stored trajectories, newest first."""
        q = select(t.trajectories)
        if agent is not None:
            q = q.where(t.trajectories.c.agent == agent)
        if status is not None:
            q = q.where(t.trajectories.c.status == status)
        q = q.order_by(t.trajectories.c.started_at.desc())
        if limit is not None:
            q = q.limit(limit)
        with self._reading() as conn:
            return [self._trajectory(r) for r in conn.execute(q)]

    def _hashes(self, trajectory_id: str) -> tuple[dict[str, tuple[str | None, str | None]], dict[str, Any]]:
        with self._reading() as conn:
            steps = {
                r.id: (r.prev_hash, r.hash)
                for r in conn.execute(
                    select(t.steps.c.id, t.steps.c.prev_hash, t.steps.c.hash).where(
                        t.steps.c.trajectory_id == trajectory_id
                    )
                )
            }
            reviews = {
                r.id: (r.prev_hash, r.hash)
                for r in conn.execute(
                    select(t.reviews.c.id, t.reviews.c.prev_hash, t.reviews.c.hash).where(
                        t.reviews.c.trajectory_id == trajectory_id
                    )
                )
            }
        return steps, reviews

    def trajectory_ids(self) -> list[str]:
        """Every trajectory id the store knows of (from trajectories, steps and reviews), sorted."""
        with self._reading() as conn:
            return sorted(
                {r[0] for r in conn.execute(select(t.trajectories.c.id))}
                | {r[0] for r in conn.execute(select(t.steps.c.trajectory_id).distinct())}
                | {r[0] for r in conn.execute(select(t.reviews.c.trajectory_id).distinct())}
            )

    def list_reviews(self, *, step_id: str | None = None, trajectory_id: str | None = None) -> list[Review]:
        """Reviews, oldest first, of one step or one trajectory (or all)."""
        q = select(t.reviews)
        if step_id is not None:
            q = q.where(t.reviews.c.step_id == step_id)
        if trajectory_id is not None:
            q = q.where(t.reviews.c.trajectory_id == trajectory_id)
        with self._reading() as conn:
            rows = list(conn.execute(q.order_by(t.reviews.c.created_at, t.reviews.c.id)))
        return [
            Review(
                id=r.id,
                trajectory_id=r.trajectory_id,
                step_id=r.step_id,
                index=r.idx,
                reviewer=r.reviewer,
                reviewer_kind=r.reviewer_kind,
                label=r.label,
                comment=r.comment,
                edited=r.edited,
                at=_utc(r.created_at) or datetime.now(UTC),
            )
            for r in rows
        ]

    def tool_pins(self, server: str | None = None, tool: str | None = None) -> list[ToolPin]:
        """What MCP servers said about their tools, one row per distinct version (see ``overseer mcp pins``)."""
        return _pins.list_pins(self.engine, server, tool)

    def pin_baseline(self, server: str, tool: str) -> ToolPin | None:
        """The accepted version of a tool seen last (``None``: never seen)."""
        return _pins.baseline(self.engine, server, tool)

    def record_tool_pin(self, pin: ToolPin) -> None:
        """Record a version of a tool as seen now (``accepted`` wins over ``refused``)."""
        _pins.record_pin(self.engine, pin)

    def accept_tool_pin(self, server: str, tool: str, pin: str | None = None) -> ToolPin:
        """Accept a refused version of a tool (the newest, or ``pin``); later sessions list it again."""
        return _pins.accept_pin(self.engine, server, tool, pin)

    def count(self, table: str = "steps") -> int:
        """How many rows a table holds (``steps``, ``scores``, ``trajectories``, ``reviews`` or ``tool_pins``)."""
        tables = {
            "steps": t.steps,
            "scores": t.scores,
            "trajectories": t.trajectories,
            "reviews": t.reviews,
            "tool_pins": t.tool_pins,
        }
        with self._reading() as conn:
            return int(conn.execute(select(func.count()).select_from(tables[table])).scalar_one())

    def _reading(self) -> Any:
        try:
            return self.engine.connect()
        except SQLAlchemyError as err:
            raise StoreError(f"cannot read the audit store {_mask(self.url)}: {err.__class__.__name__}") from None

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()
