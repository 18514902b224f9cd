from collections import Counter

from overseer import Observation, ToolCall
from overseer.prm.synthetic import generate


def test_matched_variants_label_only_the_hijacked_call_bad() -> None:
    items = list(generate(60, seed=1))
    variants = Counter(i.trajectory.metadata["variant"] for i in items)
    assert variants["benign"] == variants["resisted"] == variants["hijacked"] == 60
    assert variants["legitimate-use"] > 0
    for item in items:
        bad = [i for i, v in item.labels.items() if v == 0.0]
        variant = item.trajectory.metadata["variant"]
        assert (len(bad) == 1) is (variant == "hijacked")
        observation = next(s for s in item.trajectory.steps if isinstance(s, Observation))
        injected = (
            observation.content
            != next(
                i
                for i in items
                if i.trajectory.metadata["case"] == item.trajectory.metadata["case"]
                and i.trajectory.metadata["variant"] == "benign"
            )
            .trajectory.steps[2]
            .content
        )  # type: ignore[union-attr]
        assert injected is (variant in ("hijacked", "resisted"))
        if bad:
            assert isinstance(item.trajectory.steps[bad[0]], ToolCall)

    def content(seed: int) -> list[object]:
        return [(i.trajectory.id, [s.text() for s in i.trajectory.steps], i.labels) for i in generate(5, seed=seed)]

    assert content(3) == content(3)  # deterministic
