"""A seeded machine run generates the same examples whatever modules the process has loaded (issue 11).

Hypothesis draws some numbers from the literals of the local modules loaded in the process, so the
oracle's verdict for a seed used to depend on what its caller had imported
(``spec.machines._base.independent_of_loaded_modules``).  The test imports a local module full of
literals between two seeded runs: with the guard the draws are the same, and without it (Hypothesis
alone) they differ, which shows the test can fail.  And a machine checks an implementation only as a
subclass that names it (``target``), with the design choices it declares (O3).
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

from spec.machines._base import run_machine
from spec.machines.metadata_cache import MetadataCacheMachine
from spec.models.metadata_cache import MetadataCacheSpec

RUN = settings(max_examples=30, stateful_step_count=20, database=None, deadline=None)


def _drawing_machine() -> tuple[type[RuleBasedStateMachine], list[int]]:
    drawn: list[int] = []

    class Draws(RuleBasedStateMachine):
        @rule(n=st.integers(0, 10_000))
        def draw(self, n: int) -> None:
            drawn.append(n)

    return seed(7)(Draws), drawn


def _draws_before_and_after_loading(
    tmp_path: Path, run: Callable[[type[RuleBasedStateMachine]], object]
) -> tuple[list[int], list[int]]:
    machine, drawn = _drawing_machine()
    run(machine)
    before = list(drawn)
    module = tmp_path / "literals_of_a_caller.py"
    module.write_text("VALUES = [" + ", ".join(str(v) for v in range(4_001, 4_401)) + "]\n")
    spec = importlib.util.spec_from_file_location("literals_of_a_caller", module)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    sys.modules["literals_of_a_caller"] = loaded
    try:
        spec.loader.exec_module(loaded)
        machine, drawn = _drawing_machine()
        run(machine)
    finally:
        del sys.modules["literals_of_a_caller"]
    return before, list(drawn)


def test_a_seeded_run_draws_the_same_after_the_process_loads_a_module(tmp_path: Path) -> None:
    before, after = _draws_before_and_after_loading(tmp_path, lambda m: run_machine(m, RUN))  # type: ignore[arg-type]
    assert before, "the machine drew nothing"
    assert after == before, (
        "the examples of a seed depend on the modules loaded (Hypothesis's local constants)"
    )


@pytest.mark.slow("shows the guard's check can fail: a machine run twice around loading a module of literals")
def test_without_the_guard_the_same_runs_differ(tmp_path: Path) -> None:
    """The check above can fail: Hypothesis alone draws some of the new module's literals."""
    before, after = _draws_before_and_after_loading(
        tmp_path, lambda m: run_state_machine_as_test(m, settings=RUN)
    )
    if after == before:
        pytest.fail(
            "Hypothesis no longer draws from the literals of loaded modules: "
            "spec.machines._base.independent_of_loaded_modules can go"
        )
    assert any(4_001 <= n <= 4_400 for n in after), "the differing draws are the module's literals"


def test_a_machine_without_a_target_says_how_to_name_one() -> None:
    with pytest.raises(TypeError, match=r"^MetadataCacheMachine checks nothing: subclass it, target = "):
        MetadataCacheMachine()


@pytest.mark.clauses("O3")
def test_over_is_a_subclass_for_one_implementation_with_its_declared_choices() -> None:
    machine = MetadataCacheMachine.over(MetadataCacheSpec, eviction="lru")
    assert issubclass(machine, MetadataCacheMachine) and machine().target is MetadataCacheSpec
    assert machine.choices == {"eviction": "lru"} and MetadataCacheMachine.choices == {"eviction": "birth"}
    # Printed and derandomized as the machine itself (Hypothesis seeds a derandomized run from its source).
    assert machine.__name__ == "MetadataCacheMachine"
    assert inspect.getsource(machine) == inspect.getsource(MetadataCacheMachine)
    with pytest.raises(TypeError, match=r"^MetadataCacheMachine has no design choice bound$"):
        MetadataCacheMachine.over(MetadataCacheSpec, bound="global")
