"""The benchmarks behind ``overseer bench``, one module each: ``pipeline`` (the pipeline's own overhead), ``prm`` (the step scorer: incremental against re-encoding), ``detector`` (the injection detector per output length) and ``rescore`` (re-audit engines).

Each returns a JSON-ready dict; ratios are measured within one run. The adapters' benchmarks (``agent``, ``load``,
``mcp``) come through the ``overseer.bench`` entry-point group.
"""
