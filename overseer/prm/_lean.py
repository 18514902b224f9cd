"""The lean per-step path: the default PRM's incremental pass on a CPU, written out without transformers' forward.

The issue behind it expected most of a step to be Python-level overhead around ``BertModel.forward``. Profiled on
the 2-core development CPU, it was not: 75% of a 6-token step is the 25 matrix products, bound by reading about
7 MB of float32 weights per layer, and this path costs what transformers' does in float32. What it adds is the
place to change the arithmetic: its matrix products can run in bfloat16 (``precision``), which halves the bytes
read and about halves a step's time on a CPU with native bfloat16, or in int8 (weights quantised per output
channel once, activations per step: a quarter of the bytes, opt-in, see :class:`LeanBert`). It also keeps keys and values in one buffer
allocated once per trajectory (cropping is setting a length, not copying), fuses the query, key and value
projections, runs one ``scaled_dot_product_attention`` per layer and reads the head at the step tags only. In
float32 the scores match the transformers path to float rounding, which ``tests/prm/test_prm_lean.py`` checks
against a full recompute.

Used by :class:`overseer.prm._model.StepModel` for batch-1 incremental scoring of BERT-type decoders (the default
PRM) on a CPU, and (:meth:`LeanBert.batch`, in the weights' own dtype) for their padded incremental passes on any
device, over the slot buffers of :mod:`overseer.prm._slots`; other architectures keep the transformers path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from overseer.prm._slots import SlotStore

__all__ = ["LeanBert", "LeanCache", "LengthCache", "batch_model", "lean_model"]


class LengthCache:
    """A cache that is a length over buffers held elsewhere; cropping sets the length.

    It answers the two questions the scorer asks of a cache (``get_seq_length``, ``crop``) as
    ``transformers.DynamicCache`` does.
    """

    length: int = 0

    def get_seq_length(self) -> int:
        return self.length

    def crop(self, max_length: int) -> None:
        """Keep the first ``max_length`` positions (negative: drop that many from the end), as DynamicCache does."""
        if max_length < 0:
            max_length = self.length - abs(max_length)
        self.length = max(0, min(self.length, max_length))


class LeanCache(LengthCache):
    """Keys and values of every layer in one buffer ``[layers, 2, heads, window, head_dim]``, and its length."""

    def __init__(self, buffer: Any) -> None:
        self.buffer = buffer
        self.length = 0


class LeanBert:
    """The forward pass of a BERT decoder with a token-classification head, over a :class:`LeanCache`."""

    def __init__(self, model: Any, precision: str = "float32") -> None:
        import torch

        if precision not in ("float32", "bfloat16", "int8", "native"):
            raise ValueError(f"precision must be float32, bfloat16, int8 or native, not {precision!r}")
        # bfloat16: the matrix products read half the bytes (a step of a few dozen tokens is bound by reading the
        # weights, not by arithmetic); int8: a quarter, through PyTorch's dynamic quantised linear (weights per
        # output channel, activations per call). The residual stream, layer norms, attention and cache stay float32.
        # native: everything in the weights' own dtype (half precision on a GPU, as transformers runs it there)
        self.precision = precision
        bert, head = model.bert, model.classifier
        native = bert.embeddings.word_embeddings.weight.dtype
        mm = {"bfloat16": torch.bfloat16, "native": native}.get(precision, torch.float32)
        config = model.config
        self.heads = int(config.num_attention_heads)
        self.head_dim = int(config.hidden_size) // self.heads
        self.window = int(config.max_position_embeddings)
        self.eps = float(config.layer_norm_eps)
        emb = bert.embeddings
        self.word = emb.word_embeddings.weight.detach()
        # the token type is always 0 for this scorer: its embedding is folded into the positions'
        self.position = (emb.position_embeddings.weight + emb.token_type_embeddings.weight[0]).detach().contiguous()
        self.emb_norm = (emb.LayerNorm.weight.detach(), emb.LayerNorm.bias.detach())
        self.layers = []
        for layer in bert.encoder.layer:
            attn = layer.attention
            qkv_w = torch.cat([attn.self.query.weight, attn.self.key.weight, attn.self.value.weight]).detach()
            qkv_b = torch.cat([attn.self.query.bias, attn.self.key.bias, attn.self.value.bias]).detach()
            self.layers.append(
                (
                    qkv_w.to(mm).contiguous(),
                    qkv_b.to(mm).contiguous(),
                    attn.output.dense.weight.detach().to(mm),
                    attn.output.dense.bias.detach().to(mm),
                    attn.output.LayerNorm.weight.detach(),
                    attn.output.LayerNorm.bias.detach(),
                    layer.intermediate.dense.weight.detach().to(mm),
                    layer.intermediate.dense.bias.detach().to(mm),
                    layer.output.dense.weight.detach().to(mm),
                    layer.output.dense.bias.detach().to(mm),
                    layer.output.LayerNorm.weight.detach(),
                    layer.output.LayerNorm.bias.detach(),
                )
            )
        self.mm = mm
        if precision == "int8":
            self.layers = [_int8_layer(layer) for layer in self.layers]
        self.head = (head.weight.detach(), head.bias.detach())
        self.dtype = self.word.dtype  # the residual stream's and the cache's (float32, or the weights' own)

    def new_cache(self) -> LeanCache:
        import torch

        shape = (len(self.layers), 2, self.heads, self.window, self.head_dim)
        return LeanCache(torch.empty(shape, dtype=self.dtype))

    def __call__(self, ids: list[int], positions: list[int], cache: LeanCache) -> Any:
        """Head logits ``[len(positions), outputs]`` at ``positions`` of ``ids``, fed after ``cache`` (updated)."""
        import torch
        from torch.nn import functional as F

        past, n = cache.length, len(ids)
        if past + n > self.window:
            raise ValueError(f"{past + n} positions do not fit the model's window of {self.window}")
        hidden = self.heads * self.head_dim
        with torch.inference_mode():
            x = self.word[torch.tensor(ids)] + self.position[past : past + n]
            x = F.layer_norm(x, (hidden,), *self.emb_norm, self.eps)
            # new token i sees the cache and new tokens up to itself
            mask = None
            if n > 1:
                mask = torch.ones((n, past + n), dtype=torch.bool).tril(diagonal=past)
            mm, f32 = self.mm, self.dtype
            linear = _int8_linear if self.precision == "int8" else F.linear
            for index, (qkv_w, qkv_b, o_w, o_b, n1_w, n1_b, i_w, i_b, f_w, f_b, n2_w, n2_b) in enumerate(self.layers):
                qkv = linear(x.to(mm), qkv_w, qkv_b).to(f32).view(n, 3, self.heads, self.head_dim)
                qkv = qkv.permute(1, 2, 0, 3)
                kv = cache.buffer[index]
                kv[:, :, past : past + n] = qkv[1:]  # [2, heads, n, dim]
                # with a batch axis of one: PyTorch's CPU kernel for 4-D inputs is 2-4x faster than its path for
                # 3-D ones here (a step's attention over a long cache, and a slide's re-encoding)
                attended = F.scaled_dot_product_attention(
                    qkv[0][None], kv[0, :, : past + n][None], kv[1, :, : past + n][None], attn_mask=mask
                )
                attended = attended[0].transpose(0, 1).reshape(n, hidden)
                x = F.layer_norm(linear(attended.to(mm), o_w, o_b).to(f32) + x, (hidden,), n1_w, n1_b, self.eps)
                inner = F.gelu(linear(x.to(mm), i_w, i_b))
                x = F.layer_norm(linear(inner, f_w, f_b).to(f32) + x, (hidden,), n2_w, n2_b, self.eps)
            cache.length = past + n
            return F.linear(x[positions], *self.head)

    def batch(self, items: list[tuple[list[int], list[int], Any]], store: SlotStore) -> Any:
        """Head logits at every item's positions, in order (``[sum of positions, outputs]``), in one padded pass.

        Each item is (ids, positions, cache) with a :class:`~overseer.prm._slots.SlotCache` of ``store``: its ids
        are fed after its slot's past. Per layer, the new keys and values are written into the slots first (one
        indexed store each, real tokens only), then every row's keys and values up to the longest length are read
        back (one gather each) and attended under a mask that lets token *j* of a row see its own past and new
        tokens up to itself. About fifteen operations per layer whatever the batch; transformers' forward spends
        more on masks, cache objects and module calls (397 against 286 top-level operations for a batch of 16
        steps, the scorer's included, counted on a CPU), and on a GPU the host's work is the cost: on an H200
        (``overseer bench serve``, 2026-11-28) this pass scored 1.24x, 1.45x, 1.06x and 0.93x transformers' steps/s
        at 1, 16, 64 and 256 concurrent trajectories.
        """
        import torch
        from torch.nn import functional as F

        caches = [cache for _, _, cache in items]
        past = [cache.length for cache in caches]
        counts = [len(ids) for ids, _, _ in items]
        rows, longest = len(items), max(counts)
        needed = max(before + count for before, count in zip(past, counts, strict=True))
        if needed > self.window:
            raise ValueError(f"{needed} positions do not fit the model's window of {self.window}")
        hidden, heads, dim = self.heads * self.head_dim, self.heads, self.head_dim
        device = self.word.device
        store.reserve(needed, len(self.layers), heads, dim, self.position)
        last = self.window - 1
        # every index the pass needs, built on the host and sent in one copy: padded ids and positions [rows,
        # longest]; for each real token its (row, column) in the batch and (slot, position) in the store; for each
        # position read, its (row, column); each row's slot and its past
        ids = [t for ids, _, _ in items for t in (*ids, *[0] * (longest - len(ids)))]
        pos = [min(before + j, last) for before in past for j in range(longest)]
        tok_row = [r for r, n in enumerate(counts) for _ in range(n)]
        tok_col = [j for n in counts for j in range(n)]
        tok_slot = [caches[r].slot for r in tok_row]
        tok_pos = [past[r] + j for r, j in zip(tok_row, tok_col, strict=True)]
        read_row = [r for r, (_, positions, _) in enumerate(items) for _ in positions]
        read_col = [p for _, positions, _ in items for p in positions]
        slots = [cache.slot for cache in caches]
        flat = torch.tensor(
            ids + pos + tok_row + tok_col + tok_slot + tok_pos + read_row + read_col + slots + past, dtype=torch.long
        ).to(device, non_blocking=True)
        cuts = [rows * longest] * 2 + [len(tok_row)] * 4 + [len(read_row)] * 2 + [rows] * 2
        ids_t, pos_t, t_row, t_col, t_slot, t_pos, r_row, r_col, slot_t, past_t = torch.split(flat, cuts)
        ids_t, pos_t = ids_t.view(rows, longest), pos_t.view(rows, longest)
        with torch.inference_mode():
            # key p is seen by token j of row r when p <= past[r] + j (a padding token's output is never read)
            seen = past_t[:, None] + torch.arange(longest, device=device)[None, :]
            mask = (torch.arange(needed, device=device)[None, None, :] <= seen[:, :, None])[:, None]
            x = self.word[ids_t] + self.position[pos_t]
            x = F.layer_norm(x, (hidden,), *self.emb_norm, self.eps)
            mm, f32 = self.mm, self.dtype
            for index, (qkv_w, qkv_b, o_w, o_b, n1_w, n1_b, i_w, i_b, f_w, f_b, n2_w, n2_b) in enumerate(self.layers):
                qkv = F.linear(x.to(mm), qkv_w, qkv_b).to(f32).view(rows, longest, 3, heads, dim)
                keys, values = store.keys[index], store.values[index]
                keys[t_slot, :, t_pos] = qkv[t_row, t_col, 1]
                values[t_slot, :, t_pos] = qkv[t_row, t_col, 2]
                attended = F.scaled_dot_product_attention(
                    qkv[:, :, 0].transpose(1, 2), keys[slot_t, :, :needed], values[slot_t, :, :needed], attn_mask=mask
                )
                attended = attended.transpose(1, 2).reshape(rows, longest, hidden)
                x = F.layer_norm(F.linear(attended.to(mm), o_w, o_b).to(f32) + x, (hidden,), n1_w, n1_b, self.eps)
                inner = F.gelu(F.linear(x.to(mm), i_w, i_b))
                x = F.layer_norm(F.linear(inner, f_w, f_b).to(f32) + x, (hidden,), n2_w, n2_b, self.eps)
            logits = F.linear(x[r_row, r_col], *self.head)
        for cache, before, count in zip(caches, past, counts, strict=True):
            cache.length = before + count
        return logits


def _int8_layer(layer: tuple[Any, ...]) -> tuple[Any, ...]:
    """A layer's four matrix products packed for int8 (weight, bias pairs become (packed, None))."""
    import warnings

    import torch

    packed = list(layer)
    for at in (0, 2, 6, 8):  # qkv, attention output, intermediate, output: (weight, bias) at (at, at + 1)
        weight, bias = layer[at].float(), layer[at + 1].float()
        scales = (weight.abs().amax(dim=1) / 127.0).clamp(min=1e-8).double()
        zero = torch.zeros(weight.shape[0], dtype=torch.long)
        with warnings.catch_warnings():  # PyTorch marks its quantised tensors for removal in a future release
            warnings.simplefilter("ignore", UserWarning)
            qweight = torch.quantize_per_channel(weight, scales, zero, 0, torch.qint8)
        packed[at], packed[at + 1] = torch.ops.quantized.linear_prepack(qweight, bias), None
    return tuple(packed)


def _int8_linear(x: Any, packed: Any, _bias: Any) -> Any:
    import torch

    return torch.ops.quantized.linear_dynamic(x, packed, True)


def lean_model(model: Any, device: str, format: str, precision: str = "float32") -> LeanBert | None:
    """A :class:`LeanBert` for ``model`` where it applies (a BERT decoder with a token head, on a CPU), else None."""
    if device != "cpu" or not _applies(model, format):
        return None
    return LeanBert(model, precision)


def batch_model(model: Any, format: str) -> LeanBert | None:
    """A :class:`LeanBert` in the weights' own dtype for padded passes (:meth:`LeanBert.batch`), on any device."""
    return LeanBert(model, "native") if _applies(model, format) else None


def _applies(model: Any, format: str) -> bool:
    """Whether ``model`` is what :class:`LeanBert` computes: a BERT decoder with absolute positions and a token head."""
    config = getattr(model, "config", None)
    return (
        format == "token-classification"
        and getattr(config, "model_type", None) == "bert"
        and bool(getattr(config, "is_decoder", False))
        and getattr(config, "position_embedding_type", "absolute") == "absolute"
        and getattr(config, "hidden_act", None) == "gelu"
        and hasattr(model, "bert")
        and hasattr(model, "classifier")
    )
