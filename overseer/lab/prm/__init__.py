"""The PRM's lab: ``datasets`` (readers and the fixed held-out split), ``synthetic`` (the generator), ``train``, ``label`` (Monte Carlo and review labels) and ``evaluate``."""
