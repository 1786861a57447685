"""The regression oracle: check anyone's optimized variant against the spec.

Point it at a class (or factory) that claims to behave like one of the
project's components; it runs the project's own lock-step machine (the same
one ``make test`` runs) with the target in place of the implementation, and
answers PASS with what it covered, or FAIL with the fewest calls that make the
target and the spec disagree, written out as a runnable pytest file.

Command line::

    python -m spec.oracle metadata-cache mypackage.fast:FastCache [--seed N] [--json]
    hicache-oracle existence-cache mypackage.fast:Beliefs --adapter '{"methods": {"contains": "has"}}'

Exit status: 0 PASS, 1 divergence found, 2 usage or import error.

Python API::

    from spec.oracle import Adapter, check
    result = check("metadata-cache", "mypackage.fast:FastCache", seed=0, max_examples=300, steps=40)
    if not result.passed:
        print(result.summary())
        Path("test_repro.py").write_text(result.repro)

Components: ``metadata-cache`` (M); ``existence-cache`` (E) and ``pool-beliefs``
(P) once their machines are in the tree; ``python -m spec.oracle --list`` says
which are available.  An :class:`Adapter` maps renamed methods and arguments;
a clause group the target does not implement (no ``max_entries``, no
``__len__``, no ``stats``) is left out and named in the report.  Time: a
target that takes a ``clock`` gets the fake one; otherwise the oracle patches
``time.monotonic``/``time.time`` as the target's module sees them, for the run.
"""

from spec.oracle._adapter import Adapter
from spec.oracle._components import COMPONENTS, available_components
from spec.oracle._run import OracleResult, OracleUsageError, check, load_target, machine_for

__all__ = [
    "COMPONENTS",
    "Adapter",
    "OracleResult",
    "OracleUsageError",
    "available_components",
    "check",
    "load_target",
    "machine_for",
]
