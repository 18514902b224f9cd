"""The injection detector: which characters of a tool's output are an instruction addressed to the agent.

The runtime (``load_detector``, :class:`DetectorScorer`) is imported lazily; the lab (``compose``, ``sources``,
``train``, ``evaluate``) is never imported by the runtime.
"""

from __future__ import annotations
