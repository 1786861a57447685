"""Every deliberately wrong variant and every correct alternative, one module per component.

The proof that each checker can fail: the stateful machines (tests/stateful), the
model checker (tests/modelcheck), the race and linearizability tests
(tests/concurrency) and the oracle's catalogue (tests/oracle/catalogue.py) all take
their variants from here.

* ``metadata_cache``, ``existence_cache``, ``pool_beliefs``, ``file_evictor``,
  ``file_store``: each holds ``WRONG``: name -> (variant, the clause its mistake
  breaks), every variant a realistic mistake with a docstring that opens with its
  clauses, and (except ``file_store``) ``CORRECT``: name -> an implementation that
  must pass (textbook baselines, different structures).
* Variants written against something else than a textbook base have registries of
  their own shape and name, said in each module's docstring: ``WRONG_MODEL``
  (subclasses of the spec's model, for the machines and the model checker),
  ``WRONG_PRODUCTION`` (subclasses of production), ``RACES`` (store variants only a
  race between threads shows).

To add a variant: write it in the component's module with a docstring opening with
the clause it breaks, and list it in the registry of its kind; the catalogue then
runs it through the oracle.  The classes double as targets for trying the CLI:
``python -m spec.oracle metadata-cache spec.variants.metadata_cache:BoundaryExclusive``.
Shipped in the wheel as ``hicache_spec.variants``.
"""
