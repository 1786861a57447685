"""Bounded exhaustive model checking: every operation sequence up to a depth, implementation vs spec.

``python -m spec.modelcheck [component ...] [--depth N] [--wide] [--json PATH]``
prints, per component, the distinct abstract states, the transitions checked,
the depth reached (and whether the search reached its fixpoint) and the time.

* :mod:`spec.modelcheck.explorer`: the generic breadth-first refinement checker;
* :mod:`spec.modelcheck.components`: the registry of components and domains;
* ``spec.modelcheck.<component>``: each component's pair (implementation and
  spec in one fake world) and its refinement mapping.
"""

from .explorer import Configuration, Counterexample, Op, Pair, Result, explore
from .run import ComponentSummary, check_component

__all__ = [
    "ComponentSummary",
    "Configuration",
    "Counterexample",
    "Op",
    "Pair",
    "Result",
    "check_component",
    "explore",
]
