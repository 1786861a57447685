"""Deliberately wrong variants (and correct alternatives) that prove the oracle can fail.

Each module holds, for one component, ``WRONG``: name -> (variant, the clause
its mistake breaks), every variant a realistic optimization mistake that the
oracle must catch with a short counterexample; and ``CORRECT``: name ->
implementation that must pass (textbook baselines, different structures).
They double as targets for trying the CLI: ``python -m spec.oracle
metadata-cache spec.oracle.variants.metadata_cache:BoundaryExclusive``.
"""
