"""Where a re-audit's partitions run: this process, processes on this machine, or a Ray cluster.

One seam for every engine: ``run(partitions)`` yields ``(index, findings)`` as partitions finish, in any order.
A worker builds the policy's scorers (and loads their models) once, then judges partition after partition; it
reads each trajectory from the store itself, in a short transaction of its own, and writes nothing. Another
engine (Spark, Dask) is one more class with the same two methods.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from overseer._threads import share_cores
from overseer.exceptions import ConfigError, MissingDependencyError
from overseer.policy import Policy, policy_from_dict
from overseer.store import AuditStore

__all__ = ["ENGINES", "Checkpoint", "Engine", "make_engine"]

ENGINES = ("local", "processes", "ray")
Part = tuple[int, list[str]]


class Engine(Protocol):
    """Runs partitions of trajectory ids; yields each one's findings as it finishes."""

    def run(self, parts: Sequence[Part]) -> Iterator[tuple[int, dict[str, Any]]]:
        """Judge the partitions; yield (partition index, findings) as each finishes."""
        ...

    def close(self) -> None:
        """Let the workers go."""
        ...


class _Worker:
    """What one worker holds for the whole job: the policy's overseer (models loaded once) and the store."""

    def __init__(self, policy: dict[str, Any], store_url: str, concurrency: int, threads: int | None = None) -> None:
        from overseer._pipeline import Overseer
        from overseer.telemetry import Telemetry

        if threads:  # workers that share a machine share its cores: each torch gets its part, not all of them
            share_cores(threads)
            try:
                import torch

                torch.set_num_threads(threads)
            except ImportError:
                pass

        self.overseer = Overseer(policy_from_dict(policy), telemetry=Telemetry(otlp=False))
        self.store = AuditStore(store_url, migrate=False)
        self.concurrency = concurrency

    def replay(self, ids: list[str]) -> dict[str, Any]:
        from overseer.replay import replay_part

        return replay_part(self.overseer, self.store, ids, self.concurrency)

    def replay_indexed(self, part: Part) -> tuple[int, dict[str, Any]]:
        return part[0], self.replay(part[1])

    def close(self) -> None:
        self.overseer.close()
        self.store.close()


class LocalEngine:
    """This process, one partition after the other."""

    def __init__(self, policy: Policy, store: AuditStore, concurrency: int) -> None:
        from overseer._pipeline import Overseer
        from overseer.telemetry import Telemetry

        self._overseer = Overseer(policy, telemetry=Telemetry(otlp=False))
        self._store = store
        self._concurrency = concurrency

    def run(self, parts: Sequence[Part]) -> Iterator[tuple[int, dict[str, Any]]]:
        from overseer.replay import replay_part

        for index, ids in parts:
            yield index, replay_part(self._overseer, self._store, ids, self._concurrency)

    def close(self) -> None:
        self._overseer.close()


_PROCESS_WORKER: _Worker | None = None


def _process_init(policy: dict[str, Any], store_url: str, concurrency: int, threads: int) -> None:
    global _PROCESS_WORKER
    _PROCESS_WORKER = _Worker(policy, store_url, concurrency, threads)


def _process_replay(part: Part) -> tuple[int, dict[str, Any]]:
    assert _PROCESS_WORKER is not None
    return _PROCESS_WORKER.replay_indexed(part)


class ProcessEngine:
    """``workers`` processes on this machine (spawned, so no parent state is shared), each loading the models once."""

    def __init__(self, policy: Policy, store_url: str, workers: int, concurrency: int) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self._pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_process_init,
            initargs=(
                policy.model_dump(mode="json", exclude_none=True),
                store_url,
                concurrency,
                max(1, (os.cpu_count() or 1) // workers),
            ),
        )

    def run(self, parts: Sequence[Part]) -> Iterator[tuple[int, dict[str, Any]]]:
        from concurrent.futures import as_completed

        futures = [self._pool.submit(_process_replay, part) for part in parts]
        for future in as_completed(futures):
            yield future.result()

    def close(self) -> None:
        self._pool.shutdown(cancel_futures=True)


class RayEngine:
    """``workers`` Ray actors (one CPU each by default), each loading the models once.

    Connects to the cluster at ``RAY_ADDRESS`` (or one this process already joined); with neither, starts a
    local one for the job. Partitions go to whichever actor is free (``ray.util.ActorPool``).
    """

    def __init__(self, policy: Policy, store_url: str, workers: int, concurrency: int) -> None:
        try:
            import ray
            from ray.util import ActorPool
        except ImportError:
            raise MissingDependencyError("the Ray engine", "ray") from None
        self._ray = ray
        self._started = False
        if not ray.is_initialized():
            address = os.environ.get("RAY_ADDRESS")
            ray.init(
                address=address or None, include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False
            )
            self._started = address is None
        cpus = float(os.environ.get("OVERSEER_RAY_CPUS_PER_WORKER", "1"))
        actor = ray.remote(num_cpus=cpus)(_Worker)
        spec = policy.model_dump(mode="json", exclude_none=True)
        threads = max(1, int(cpus))
        self._actors: list[Any] = [actor.remote(spec, store_url, concurrency, threads) for _ in range(workers)]
        self._pool = ActorPool(self._actors)

    def run(self, parts: Sequence[Part]) -> Iterator[tuple[int, dict[str, Any]]]:
        yield from self._pool.map_unordered(lambda actor, part: actor.replay_indexed.remote(part), list(parts))

    def close(self) -> None:
        for actor in self._actors:
            self._ray.kill(actor)
        if self._started:
            self._ray.shutdown()


def make_engine(name: str, policy: Policy, store: AuditStore, *, workers: int = 1, concurrency: int = 8) -> Engine:
    """The engine called ``name`` (one of :data:`ENGINES`)."""
    if name not in ENGINES:
        raise ConfigError(f"--engine {name!r}: expected one of {', '.join(ENGINES)}")
    if workers < 1:
        raise ConfigError(f"--workers {workers}: expected at least 1")
    if name == "local":
        return LocalEngine(policy, store, concurrency)
    in_memory = store.dialect == "memory" or ":memory:" in store.url or store.url.rstrip("/") in ("sqlite:", "sqlite:/")
    if in_memory:
        raise ConfigError(f"--engine {name} reads the store from other processes: an in-memory store cannot be")
    if name == "processes":
        return ProcessEngine(policy, store.url, workers, concurrency)
    return RayEngine(policy, store.url, workers, concurrency)


class Checkpoint:
    """A folder that keeps each finished partition of one re-audit job, so that a job run again resumes."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def open(cls, folder: str | Path, policy_id: str, parts: Sequence[Sequence[str]]) -> Checkpoint:
        """The folder for this job (created); an error if it holds another job's partitions.

        Raises:
            ConfigError: the folder was made for another policy or another cut of the trajectories.
        """
        path = Path(folder)
        path.mkdir(parents=True, exist_ok=True)
        job = {"policy": policy_id, "parts": hashlib.sha256(json.dumps(list(map(list, parts))).encode()).hexdigest()}
        manifest = path / "job.json"
        if manifest.exists():
            try:
                found = json.loads(manifest.read_text())
            except (OSError, ValueError) as err:
                raise ConfigError(f"{manifest}: not a re-audit checkpoint ({err})") from None
            if found != job:
                raise ConfigError(
                    f"{path} holds partitions of another re-audit (policy {found.get('policy')!r}, or other "
                    "trajectories or partition size): use another --checkpoint folder"
                )
        else:
            _write(manifest, job)
        return cls(path)

    def load(self, index: int) -> dict[str, Any] | None:
        """A finished partition's findings, or ``None``."""
        path = self.folder / f"part-{index:06d}.json"
        try:
            return dict(json.loads(path.read_text()))
        except FileNotFoundError:
            return None
        except ValueError:
            return None  # cut short by the kill: judged again

    def save(self, index: int, part: dict[str, Any]) -> None:
        """Keep a finished partition (written whole or not at all)."""
        _write(self.folder / f"part-{index:06d}.json", part)


def _write(path: Path, data: Any) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".part-", suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh)
    os.replace(tmp, path)
