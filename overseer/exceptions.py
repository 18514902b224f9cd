"""Every exception that overseer raises on purpose.

The hierarchy::

    OverseerError                      base of everything below
    ├── ConfigError                    a usage or configuration mistake
    │   ├── PolicyError                a policy file or dict that does not validate (file, line, key path)
    │   ├── MissingDependencyError     an optional extra is not installed (says what to install)
    │   └── LifecycleError             used in a state that does not allow it (closed, ended, own loop)
    ├── TrajectoryFormatError          a trajectory line that cannot be read (file, line, field)
    ├── ScorerError                    a scorer raised or returned something unusable
    │   └── ScorerTimeoutError         a scorer did not answer within the policy's timeout
    └── StoreError                     the audit store cannot be opened or read

Control flow is not carried by exceptions here: what a policy decides travels as a typed
:class:`overseer.Verdict`. Adapters may turn a verdict into their framework's own control flow.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "LifecycleError",
    "MissingDependencyError",
    "OverseerError",
    "PolicyError",
    "ScorerError",
    "ScorerTimeoutError",
    "StoreError",
    "TrajectoryFormatError",
]


class OverseerError(Exception):
    """Base class of every error that overseer raises on purpose."""


class ConfigError(OverseerError):
    """A usage or configuration mistake."""


class PolicyError(ConfigError):
    """A policy that does not validate.

    Attributes:
        source: the file the policy came from, or ``"<string>"`` / ``"<dict>"``.
        problems: one line per problem, each naming the line and key path where known.
    """

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        listing = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"invalid policy {source}:\n{listing}")


class MissingDependencyError(ConfigError, ImportError):
    """An optional dependency is missing; the message says which extra to install."""

    def __init__(self, what: str, extra: str) -> None:
        self.extra = extra
        super().__init__(f"{what} needs the '{extra}' extra: pip install 'overseer[{extra}]'")


class LifecycleError(ConfigError, RuntimeError):
    """An Overseer used after it closed, a trajectory after it ended, or a sync call made from overseer's own loop.

    Also a ``RuntimeError``, which these misuses raised before they had a class of their own.
    """


class TrajectoryFormatError(OverseerError):
    """A trajectory record that cannot be read.

    Attributes:
        file: the file being read.
        line: the 1-based line number of the record.
        field: the dotted path of the offending field (``""`` when the whole line is at fault).
        problem: what is wrong, in words.
    """

    def __init__(self, file: str, line: int, field: str, problem: str) -> None:
        self.file = file
        self.line = line
        self.field = field
        self.problem = problem
        where = f"{file}:{line}"
        super().__init__(f"{where}: field '{field}': {problem}" if field else f"{where}: {problem}")


class ScorerError(OverseerError):
    """A scorer failed on a step."""

    def __init__(self, scorer: str, message: str) -> None:
        self.scorer = scorer
        super().__init__(f"scorer '{scorer}': {message}")


class ScorerTimeoutError(ScorerError):
    """A scorer did not answer within the policy's ``scorer_timeout_s``."""


class StoreError(OverseerError):
    """The audit store cannot be opened or read."""
