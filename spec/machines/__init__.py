"""Lock-step conformance machines: each drives one implementation and the spec together.

Each module defines a Hypothesis ``RuleBasedStateMachine`` class, run as one
subclass per implementation (``target = staticmethod(factory)``, or
``Machine.over(factory)``), so the project's tests, the oracle and a user's own
suite all run the same machine.  Hypothesis is a tooling dependency: nothing
under ``hicache/`` or the models imports this package.
"""

from ._base import Figures, LockstepMachine, run_machine

__all__ = ["Figures", "LockstepMachine", "run_machine"]
