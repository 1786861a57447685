"""Every deliberately wrong variant and every correct alternative, one module per component.

The proof that each checker can fail: the stateful machines, the model checker, the race
and linearizability tests and the oracle's catalogue (tests/oracle/catalogue.py) take their
variants from here.  Each module (``metadata_cache``, ``existence_cache``, ``pool_beliefs``,
``file_evictor``, ``file_store``) keeps registries, name -> ``(variant, the clause its
mistake breaks)``, one per kind of base, said in its docstring: ``WRONG`` (a textbook
implementation written here with one mistake), ``WRONG_MODEL`` (the spec's model with one),
``WRONG_PRODUCTION`` (production with one), ``RACES``, ``CONCURRENT`` (mistakes only real threads show,
which the oracle's ``--threads`` must catch, tests/oracle/test_threads.py); and ``CORRECT``, name -> an
implementation the oracle must pass (textbook baselines, other structures), ``CONCURRENT_CORRECT``
the same under ``--threads``.  ``WRONG_BACKGROUND`` and ``CORRECT_BACKGROUND`` (file evictor, file store)
are the same under a declared choice, V3-bg's ``eviction=background``: the catalogue runs them with it
declared.

To add a variant: write it in its component's module with a docstring that opens with the
clauses it breaks (``"E4: ..."``, ``"V4/C3 broken: ..."``), and list it in the registry of its
kind; the catalogue then runs it through the oracle.  The registry's clause is what the oracle
must name; any other the mistake breaks, which the oracle may name first, goes in the
catalogue's ``ALSO_NAMED`` (nothing reads the docstring's clauses).  The classes double as targets for the
CLI: ``python -m spec.oracle metadata-cache spec.variants.metadata_cache:BoundaryExclusive``.
"""
