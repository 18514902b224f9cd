"""Shared fixtures: audit stores on every backend, the shared datasets folder, a tiny trajectory."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from overseer import AuditStore

# Loading a model freezes the heap (overseer._threads.settle_heap): frozen objects are invisible to
# gc.get_referrers, which Hypothesis's register_random (called by trio's plugin at the session's end) reads and
# then warns, and warnings are errors here. One test turns the freeze on and thaws the heap after it.
os.environ.setdefault("OVERSEER_GC_FREEZE", "0")

PG_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
SHARED = Path(__file__).resolve().parents[2] / "shared"


def _pg_available() -> bool:
    try:
        import psycopg

        with psycopg.connect("host=127.0.0.1 port=5432 user=postgres dbname=postgres", connect_timeout=2):
            return True
    except Exception:
        return False


PG_AVAILABLE = _pg_available()


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test, dropped afterwards."""
    if not PG_AVAILABLE:
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
    import psycopg

    name = f"overseer_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect("host=127.0.0.1 port=5432 user=postgres dbname=postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield f"postgresql://postgres@127.0.0.1:5432/{name}"
    try:
        with psycopg.connect(
            "host=127.0.0.1 port=5432 user=postgres dbname=postgres", autocommit=True, connect_timeout=5
        ) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    except Exception:
        pass


def _url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "memory":
        return f"memory://{tmp_path.name}"
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'audit.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An audit store URL on each backend: the in-memory reference store, SQLite and PostgreSQL."""
    return _url(request, tmp_path)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def sql_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An audit store URL on each SQL backend (for what only a database has: migrations, locks, outages)."""
    return _url(request, tmp_path)


@pytest.fixture
def shared_datasets() -> Path:
    """``../shared/datasets``, or a skip where this checkout has none (a user's fresh clone)."""
    path = SHARED / "datasets"
    if not path.is_dir():
        pytest.skip(f"{path} is absent: the shared datasets are not part of the product")
    return path


@pytest.fixture
def open_store() -> Iterator[Callable[..., AuditStore]]:
    """Open audit stores that are closed when the test ends."""
    stores: list[AuditStore] = []

    def make(url: str, **kwargs: Any) -> AuditStore:
        store = AuditStore(url, **kwargs)
        stores.append(store)
        return store

    yield make
    for store in stores:
        store.close()


_SLOW_POLICY = """version: 1
name: slow-strict
extends: strict
scorers:
  rules: {{type: rules}}
  slow: {{type: python, factory: "slow_scorer:make", options: {{seconds: {seconds}}}}}
"""
_SLOW_SCORER = """import time
from overseer.testing import FunctionScorer

def make(seconds):
    def score(request):
        time.sleep(seconds)
        return {"slow": 1.0}
    return FunctionScorer(score, name="slow")
"""


@pytest.fixture
def slow_strict(tmp_path: Path) -> Callable[[float], tuple[Path, dict[str, str]]]:
    """The strict policy plus a scorer that sleeps ``seconds`` a step: a policy file and the environment that
    imports its scorer (for jobs killed part-way in a subprocess)."""
    import os

    def make(seconds: float) -> tuple[Path, dict[str, str]]:
        (tmp_path / "slow_scorer.py").write_text(_SLOW_SCORER)
        policy = tmp_path / "slow.yaml"
        policy.write_text(_SLOW_POLICY.format(seconds=seconds))
        return policy, dict(os.environ, PYTHONPATH=str(tmp_path))

    return make
