"""Keys and values of many trajectories in one buffer per layer: the padded incremental pass without per-row copies.

Measured on an H200 (``overseer bench serve``), the padded pass that kept one ``DynamicCache`` per trajectory spent
its time gluing: padding every row's cache into a batch and cutting every row back out took about 24 small copies
per step for a 6-layer model, each its own kernel launch and Python call, and the GPU sat idle between them.

Here each trajectory owns a *slot*: row ``slot`` of a ``[slots, kv_heads, capacity, head_dim]`` buffer per layer,
and a length. A batch reads its rows' pasts with one gather per layer (``width`` = the longest past; a shorter
row's tail is stale but masked), runs the model, and writes every row's new keys and values back with one indexed
store per layer. The copies per step no longer grow with the batch. A slot is given back when its cache object
is dropped. The buffers grow (by doubling) in slots and in length, up to the model's window.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from overseer.prm._lean import LengthCache

__all__ = ["SlotCache", "SlotStore"]


class SlotCache(LengthCache):
    """One trajectory's cache: a slot of a :class:`SlotStore` and its length."""

    def __init__(self, store: SlotStore, slot: int) -> None:
        self.store = store
        self.slot = slot
        self.length = 0


class SlotStore:
    """The buffers behind :class:`SlotCache` for one model on one device (created on the first batch)."""

    def __init__(self, max_length: int, slots: int = 16, capacity: int = 256) -> None:
        self.max_length = max_length
        self._slots = slots
        self._capacity = min(capacity, max_length)
        self.keys: list[Any] = []
        self.values: list[Any] = []
        self._free: list[int] = []
        self._issued = 0
        self._lock = threading.RLock()  # a slot dropped by the garbage collector inside a locked section comes back

    @property
    def capacity(self) -> int:
        """Positions each slot holds now."""
        return self._capacity

    def allocate(self) -> SlotCache:
        """A new empty cache on a free slot (the slot returns to the pool when the cache is dropped)."""
        with self._lock:
            if self._free:
                slot = self._free.pop()
            else:
                if self._issued == self._slots:  # every slot is taken: twice as many
                    if self.keys:
                        self._resize(self._slots * 2, self._capacity)
                    else:
                        self._slots *= 2
                slot = self._issued
                self._issued += 1
        cache = SlotCache(self, slot)
        weakref.finalize(cache, self._release, slot)
        return cache

    def _release(self, slot: int) -> None:
        with self._lock:
            self._free.append(slot)

    def _resize(self, slots: int, capacity: int) -> None:
        for buffers in (self.keys, self.values):
            for layer, old in enumerate(buffers):
                new = old.new_zeros((slots, old.shape[1], capacity, old.shape[3]))
                new[: old.shape[0], :, : old.shape[2]] = old
                buffers[layer] = new
        self._slots, self._capacity = slots, capacity

    def reserve(self, needed: int, layers: int, kv_heads: int, head_dim: int, like: Any) -> None:
        """Make the buffers (``layers`` of them, dtype and device of the tensor ``like``) and grow them to ``needed``."""
        if not self.keys:
            shape = (self._slots, kv_heads, self._capacity, head_dim)
            for _ in range(layers):
                self.keys.append(like.new_zeros(shape))
                self.values.append(like.new_zeros(shape))
        if needed > self._capacity:
            with self._lock:
                self._resize(self._slots, min(self.max_length, max(needed, 2 * self._capacity)))

    def gather(self, caches: list[SlotCache], width: int, needed: int, template: Any) -> Any:
        """A batch cache (``template``: an empty ``DynamicCache``) holding each row's first ``width`` positions.

        ``needed``: the longest length any row reaches in this pass (the buffers grow to hold it).
        """
        torch = _torch()
        if needed > self._capacity:
            with self._lock:
                self._resize(self._slots, min(self.max_length, max(needed, 2 * self._capacity)))
        if width == 0:
            return template
        rows = torch.tensor([c.slot for c in caches], device=self.keys[0].device)
        for layer, (keys, values) in enumerate(zip(self.keys, self.values, strict=True)):
            template.update(keys[:, :, :width].index_select(0, rows), values[:, :, :width].index_select(0, rows), layer)
        return template

    def scatter(self, merged: Any, caches: list[SlotCache], past: list[int], new: list[int], width: int) -> None:
        """Write each row's new keys and values (at ``width`` onwards in ``merged``) after its own past."""
        torch = _torch()
        if not self.keys:  # the first pass: the buffers take the model's shapes and dtype
            first = merged.layers[0].keys
            self.reserve(0, len(merged.layers), first.shape[1], first.shape[3], first)
        total = sum(new)
        if total:
            # every new token's (row, source position) -> (slot, target position), built on the device from one
            # small [3, rows] tensor, not from a Python list per token
            device = self.keys[0].device
            slot_past_count = torch.tensor([[c.slot for c in caches], past, new], device=device)
            counts = slot_past_count[2]
            rows = torch.repeat_interleave(torch.arange(len(caches), device=device), counts, output_size=total)
            starts = torch.repeat_interleave(torch.cumsum(counts, 0) - counts, counts, output_size=total)
            offset = torch.arange(total, device=device) - starts
            source = offset + width
            slots = torch.repeat_interleave(slot_past_count[0], counts, output_size=total)
            target = torch.repeat_interleave(slot_past_count[1], counts, output_size=total) + offset
            for layer, (keys, values) in enumerate(zip(self.keys, self.values, strict=True)):
                keys[slots, :, target] = merged.layers[layer].keys[rows, :, source]
                values[slots, :, target] = merged.layers[layer].values[rows, :, source]
        for cache, before, count in zip(caches, past, new, strict=True):
            cache.length = before + count


def _torch() -> Any:
    import torch

    return torch
