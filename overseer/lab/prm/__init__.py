"""The PRM's lab: readers, generator, training, labelling and evaluation (``overseer prm data|train|label|eval``).

``datasets`` (readers and the fixed held-out split), ``synthetic`` (the generator), ``train``, ``label`` (Monte
Carlo and review labels) and ``evaluate``.
"""
