"""What every lock-step machine shares: counting examples, steps and distinct states."""

from __future__ import annotations

import time
from collections.abc import Hashable
from dataclasses import dataclass, field

from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, run_state_machine_as_test

__all__ = ["Figures", "LockstepMachine", "run_machine"]


@dataclass
class Figures:
    """What a run of a machine covered."""

    examples: int = 0
    checks: int = 0  # comparisons of implementation and spec: one after init, one per step
    states: set[Hashable] = field(default_factory=set)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {
            "examples": self.examples,
            "steps": self.checks - self.examples,
            "distinct_states": len(self.states),
            "seconds": round(self.seconds, 2),
        }


class LockstepMachine(RuleBasedStateMachine):
    """Base of the machines: subclasses compare answers in their rules and
    implement ``abstract_state`` (a hashable view of the spec state) and
    ``check_step`` (compare implementation and spec after every step)."""

    figures: Figures = Figures()

    def __init__(self) -> None:
        super().__init__()
        type(self).figures.examples += 1

    def abstract_state(self) -> Hashable:
        raise NotImplementedError

    def check_step(self) -> None:
        raise NotImplementedError

    @invariant()
    def _after_every_step(self) -> None:
        self.check_step()
        figures = type(self).figures
        figures.checks += 1
        figures.states.add(self.abstract_state())


def run_machine(machine: type[LockstepMachine], run_settings: settings | None = None) -> Figures:
    """Run ``machine`` as a test and return what it covered (raises on a divergence)."""
    machine.figures = Figures()
    start = time.perf_counter()
    try:
        run_state_machine_as_test(machine, settings=run_settings)
    finally:
        machine.figures.seconds = time.perf_counter() - start
    return machine.figures
