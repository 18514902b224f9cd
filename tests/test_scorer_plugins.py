"""A scorer type from a plug-in: a distribution that registers a spec class in the ``overseer.scorers`` group."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from overseer import Overseer, PolicyError, ToolCall, load_policy
from overseer.scorers import scorer_types

PLUGIN = '''
from typing import Literal

from overseer.scorers import BaseScorerSpec, StepScorer
from overseer.testing import FunctionScorer


class ShoutSpec(BaseScorerSpec):
    """Scores a step 0 when its text has a word in capitals at least ``min_length`` long."""

    type: Literal["shout"]
    min_length: int = 4

    def produces(self, name: str) -> frozenset[str]:
        return frozenset({name})

    def build(self, name: str) -> StepScorer:
        def shouts(request):
            words = request.step.text().split()
            loud = any(w.isupper() and len(w) >= self.min_length for w in words)
            return {name: 0.0 if loud else 1.0}

        return FunctionScorer(shouts, name=name)
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An installed distribution, as pip leaves one: a module and a .dist-info folder with its entry points."""
    (tmp_path / "shout_plugin.py").write_text(textwrap.dedent(PLUGIN))
    info = tmp_path / "shout_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shout-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[overseer.scorers]\nshout = shout_plugin:ShoutSpec\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    scorer_types.cache_clear()
    yield
    scorer_types.cache_clear()


def policy(**options: object) -> dict[str, object]:
    return {
        "name": "loud",
        "scorers": {"loud": {"type": "shout", **options}},
        "rules": [{"name": "no-shouting", "when": {"score": {"loud": {"below": 0.5}}}, "action": "block"}],
    }


@pytest.mark.usefixtures("plugin")
def test_a_plugin_scorer_type_is_validated_and_runs() -> None:
    loaded = load_policy(policy(min_length=3))
    assert type(loaded.scorers["loud"]).__name__ == "ShoutSpec" and loaded.scorers["loud"].min_length == 3  # type: ignore[attr-defined]
    with Overseer(loaded) as ov, ov.trajectory("write to Ana") as run:
        assert run.judge(ToolCall(tool="send", args={"body": "hello"})).action == "allow"
        verdict = run.judge(ToolCall(tool="send", args={"body": "PAY NOW"}))
    assert (verdict.action, verdict.rule, verdict.scores) == ("block", "no-shouting", {"loud": 0.0})
    with pytest.raises(PolicyError, match="min_length"):  # its own options are checked by its own class
        load_policy(policy(min_length="many"))


def test_an_unregistered_type_names_the_group() -> None:
    with pytest.raises(PolicyError, match=r"unknown scorer type 'shout'.*overseer\.scorers"):
        load_policy(policy())
