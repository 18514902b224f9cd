from collections import Counter

from overseer import Observation, ToolCall
from overseer.lab.prm.synthetic import generate


def test_matched_variants_label_only_the_steps_that_serve_the_injection_bad() -> None:
    items = list(generate(150, seed=1))
    variants = Counter(i.trajectory.metadata["variant"] for i in items)
    assert variants["benign"] == variants["resisted"] == variants["hijacked"] == 150
    assert variants["legitimate-use"] > 0 and variants["wrong-arguments"] > 0
    benign = {i.trajectory.metadata["case"]: i for i in items if i.trajectory.metadata["variant"] == "benign"}
    for item in items:
        variant = item.trajectory.metadata["variant"]
        bad = sorted(i for i, v in item.labels.items() if v == 0.0)
        assert bool(bad) is (variant in ("hijacked", "wrong-arguments")), (variant, item.labels)
        # nothing after the first bad step is labelled
        assert not bad or max(item.labels) <= bad[-1]
        outputs = [s.content for s in item.trajectory.steps if isinstance(s, Observation)]
        clean = [
            s.content for s in benign[item.trajectory.metadata["case"]].trajectory.steps if isinstance(s, Observation)
        ]
        n_reads = sum(1 for c in clean if c not in ("ok", "Done.", '{"ok": true}'))
        injected = outputs[:n_reads] != clean[:n_reads]
        assert injected is (variant in ("hijacked", "resisted")), variant
        if variant == "hijacked":
            # the bad steps are calls (or the answer the injection asked for), all after the injected output
            first_injected = next(
                k for k, s in enumerate(item.trajectory.steps) if isinstance(s, Observation) and s.content not in clean
            )
            assert all(k > first_injected for k in bad)
        if variant == "wrong-arguments":
            assert len(bad) == 1 and isinstance(item.trajectory.steps[bad[0]], ToolCall)
    # tool names come in several spellings, so a name is never the tell
    names = {s.tool for i in items for s in i.trajectory.steps if isinstance(s, ToolCall)}
    assert {"send_email", "send.email", "SendEmail", "sendEmail"} & names >= {"send_email", "sendEmail"}

    def content(seed: int) -> list[object]:
        return [(i.trajectory.id, [s.text() for s in i.trajectory.steps], i.labels) for i in generate(5, seed=seed)]

    assert content(3) == content(3)  # deterministic
