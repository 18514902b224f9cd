"""The benchmarks behind ``overseer bench``, one module each, every one returning a JSON-ready dict.

``pipeline`` (the pipeline's own overhead), ``prm`` (the step scorer: incremental against re-encoding),
``detector`` (the injection detector per output length) and ``rescore`` (re-audit engines). Ratios are measured
within one run. The adapters' benchmarks (``agent``, ``load``, ``mcp``) come through the ``overseer.bench``
entry-point group.
"""
