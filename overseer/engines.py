"""Where a batch job's partitions run: this process, processes on this machine, or a Ray cluster.

One seam for every engine: ``run(partitions)`` yields ``(index, result)`` as partitions finish, in any order.
A worker builds the policy's scorers (and loads their models) once, then works partition after partition. Two
kinds of work: ``replay`` (re-audit, :func:`overseer.replay.replay_part`: the worker reads each stored trajectory
itself, in a short transaction of its own, and writes nothing) and ``score`` (``overseer score``,
:func:`overseer.batch.score_part`: the partition carries its trajectories, and the worker records its decisions in
the audit store). Another engine (Spark, Dask) is one more class with the same two methods.
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

__all__ = ["ENGINES", "WORK", "Checkpoint", "Engine", "make_engine"]

ENGINES = ("local", "processes", "ray")
WORK = ("replay", "score")
Part = tuple[int, Any]  # (index, trajectory ids) to replay, or (index, [(id, trajectory as JSON), ...]) to score


class Engine(Protocol):
    """Runs partitions of trajectory ids; yields each one's findings as it finishes."""

    def run(self, parts: Sequence[Part]) -> Iterator[tuple[int, dict[str, Any]]]:
        """Judge the partitions; yield (partition index, findings) as each finishes."""
        ...

    def close(self) -> None:
        """Let the workers go."""
        ...


class _Worker:
    """What one worker holds for the whole job: the policy's overseer (models loaded once) and the store.

    To replay, the store is read and nothing is recorded; to score, the overseer records into the store.
    """

    def __init__(self, overseer: Any, store: AuditStore | None, concurrency: int, work: str) -> None:
        self.overseer = overseer
        self.store = store
        self.concurrency = concurrency
        self.work = work

    def do(self, part: Any) -> dict[str, Any]:
        """One partition's result."""
        if self.work == "score":
            from overseer.batch import score_part

            result = score_part(self.overseer, part, self.concurrency)
            self.overseer.flush()  # recorded before the partition counts as done
            return result
        from overseer.replay import replay_part

        assert self.store is not None
        return replay_part(self.overseer, self.store, part, self.concurrency)

    def do_indexed(self, part: Part) -> tuple[int, dict[str, Any]]:
        return part[0], self.do(part[1])

    def close(self) -> None:
        self.overseer.close()


def _overseer(policy: Policy, store: AuditStore | str | None, work: str) -> Any:
    from overseer._pipeline import Overseer
    from overseer.telemetry import Telemetry

    if work == "score":
        return Overseer(policy, store=store)  # records, as on one process
    return Overseer(policy, telemetry=Telemetry(otlp=False))


class _SpawnedWorker(_Worker):
    """A worker in another process or on another machine: builds its overseer and opens the store by URL."""

    def __init__(
        self, policy: dict[str, Any], store_url: str | None, concurrency: int, threads: int | None, work: str
    ) -> None:
        if threads:  # workers that share a machine share its cores: each torch gets its part, not all of them
            share_cores(threads)
            try:
                import torch

                torch.set_num_threads(threads)
            except ImportError:
                pass
        store = AuditStore(store_url, migrate=False) if work == "replay" and store_url else None
        super().__init__(_overseer(policy_from_dict(policy), store_url, work), store, concurrency, work)

    def close(self) -> None:
        super().close()
        if self.store is not None:
            self.store.close()


class LocalEngine:
    """This process, one partition after the other."""

    def __init__(self, policy: Policy, store: AuditStore | None, concurrency: int, work: str = "replay") -> None:
        self._worker = _Worker(_overseer(policy, store, work), store, concurrency, work)

    def run(self, parts: Sequence[Part]) -> Iterator[tuple[int, dict[str, Any]]]:
        for part in parts:
            yield self._worker.do_indexed(part)

    def close(self) -> None:
        self._worker.close()


_PROCESS_WORKER: _Worker | None = None


def _process_init(policy: dict[str, Any], store_url: str | None, concurrency: int, threads: int, work: str) -> None:
    global _PROCESS_WORKER
    _PROCESS_WORKER = _SpawnedWorker(policy, store_url, concurrency, threads, work)


def _process_do(part: Part) -> tuple[int, dict[str, Any]]:
    assert _PROCESS_WORKER is not None
    return _PROCESS_WORKER.do_indexed(part)


class ProcessEngine:
    """``workers`` processes on this machine (spawned, so no parent state is shared), each loading the models once."""

    def __init__(
        self, policy: Policy, store_url: str | None, workers: int, concurrency: int, work: str = "replay"
    ) -> None:
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
                work,
            ),
        )

    def run(self, parts: Sequence[Part]) -> Iterator[tuple[int, dict[str, Any]]]:
        from concurrent.futures import as_completed

        futures = [self._pool.submit(_process_do, part) for part in parts]
        for future in as_completed(futures):
            yield future.result()

    def close(self) -> None:
        self._pool.shutdown(cancel_futures=True)


class RayEngine:
    """``workers`` Ray actors (one CPU each by default), each loading the models once.

    Connects to the cluster at ``RAY_ADDRESS`` (or one this process already joined); with neither, starts a
    local one for the job. Partitions go to whichever actor is free (``ray.util.ActorPool``).
    """

    def __init__(
        self, policy: Policy, store_url: str | None, workers: int, concurrency: int, work: str = "replay"
    ) -> None:
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
        actor = ray.remote(num_cpus=cpus)(_SpawnedWorker)
        spec = policy.model_dump(mode="json", exclude_none=True)
        threads = max(1, int(cpus))
        self._actors: list[Any] = [actor.remote(spec, store_url, concurrency, threads, work) for _ in range(workers)]
        self._pool = ActorPool(self._actors)

    def run(self, parts: Sequence[Part]) -> Iterator[tuple[int, dict[str, Any]]]:
        yield from self._pool.map_unordered(lambda actor, part: actor.do_indexed.remote(part), list(parts))

    def close(self) -> None:
        for actor in self._actors:
            self._ray.kill(actor)
        if self._started:
            self._ray.shutdown()


def make_engine(
    name: str, policy: Policy, store: AuditStore | None, *, workers: int = 1, concurrency: int = 8, work: str = "replay"
) -> Engine:
    """The engine called ``name`` (one of :data:`ENGINES`) for ``work`` (one of :data:`WORK`).

    ``store`` is read (``replay``) or recorded into (``score``; ``None``: nothing recorded).
    """
    if name not in ENGINES:
        raise ConfigError(f"--engine {name!r}: expected one of {', '.join(ENGINES)}")
    if work not in WORK:
        raise ConfigError(f"work {work!r}: expected one of {', '.join(WORK)}")
    if workers < 1:
        raise ConfigError(f"--workers {workers}: expected at least 1")
    if store is None and work == "replay":
        raise ConfigError("a re-audit reads the store: give one")
    if name == "local":
        return LocalEngine(policy, store, concurrency, work)
    if store is not None:
        in_memory = (
            store.dialect == "memory" or ":memory:" in store.url or store.url.rstrip("/") in ("sqlite:", "sqlite:/")
        )
        if in_memory:
            raise ConfigError(f"--engine {name} uses the store from other processes: an in-memory store cannot be")
    url = store.url if store is not None else None
    if name == "processes":
        return ProcessEngine(policy, url, workers, concurrency, work)
    return RayEngine(policy, url, workers, concurrency, work)


class Checkpoint:
    """A folder that keeps each finished partition of one job (a re-audit, a scoring run), so that it resumes."""

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
                    f"{path} holds partitions of another job (policy {found.get('policy')!r}, or other "
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

    def keep(self, name: str, data: Any) -> None:
        """Keep something else the job needs when it runs again (``NAME.json``, written whole or not at all)."""
        _write(self.folder / f"{name}.json", data)


def _write(path: Path, data: Any) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".part-", suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh)
    os.replace(tmp, path)
