"""The injection detector's lab: composer, sources, training and evaluation (``overseer detector data|train|eval``).

``compose`` (documents from independent factors), ``sources`` (training documents and the unseen evaluation sets),
``train`` and ``evaluate`` (the unseen-source protocol under a whole policy).
"""
