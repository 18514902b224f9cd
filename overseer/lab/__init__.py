"""The lab: what trains and evaluates the judge's models, apart from what serves a step.

- :mod:`overseer.lab.prm`: dataset readers, the synthetic generator, training, labelling, evaluation of the PRM
  (``overseer prm data|train|label|eval``);
- :mod:`overseer.lab.detector`: the document composer, training sources, training and the unseen-source evaluation
  of the injection detector (``overseer detector data|train|eval``).

The runtime (``overseer.prm``, ``overseer.detector``, the pipeline) never imports the lab; the lab imports the
runtime and, to replay trajectories under a whole policy, the pipeline.
"""
