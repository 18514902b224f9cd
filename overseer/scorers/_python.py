"""A scorer of your own, named in the policy by its factory: ``type: python, factory: package.module:callable``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from overseer.exceptions import ConfigError
from overseer.scorers._base import StepScorer
from overseer.scorers._spec import BaseScorerSpec, resolve

__all__ = ["PythonScorerSpec", "resolve_factory"]


def resolve_factory(name: str, dotted: str) -> Any:
    """The callable ``package.module:attr`` names (imported, not called); a ConfigError says why it cannot be."""
    factory = resolve(name, dotted)
    if not callable(factory):
        raise ConfigError(f"scorer {name!r}: {dotted!r} is not callable")
    return factory


class PythonScorerSpec(BaseScorerSpec):
    """A scorer of your own: ``factory`` is ``module:callable``, called with ``options`` as keyword arguments."""

    type: Literal["python"]
    """Always ``python``."""
    factory: str = Field(pattern=r"^[\w.]+:[\w.]+$")
    """``package.module:callable`` returning a StepScorer."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for the factory."""

    def build(self, name: str) -> StepScorer:
        """Import the factory and call it with the options."""
        factory = resolve_factory(name, self.factory)
        try:
            built = factory(**self.options)
        except Exception as err:  # third-party code: its failure is a configuration error, not a traceback
            raise ConfigError(f"scorer {name!r}: {self.factory}(...) raised {type(err).__name__}: {err}") from None
        if not isinstance(built, StepScorer):
            raise ConfigError(f"scorer {name!r}: {self.factory} returned {type(built).__name__}, not a StepScorer")
        return built
