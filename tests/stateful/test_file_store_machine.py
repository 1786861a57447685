"""Lock-step refinement of HiCacheFile against its model on the fake filesystem (F1-F8, V1-V6, C1-C4, B2).

Every step compares the directory, the evictor's entries (C3) and the beliefs;
the rules check C1, C2, C4, F5 and F6 as properties.  The same machine runs over
the model itself (tests/stateful/model_targets.py: it must trivially conform, which
checks the machine, not the model).  The deliberately wrong variants in
``spec/variants/file_store.py`` show that this machine fails when it should.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import Phase, settings

from hicache import HiCacheFile
from spec.machines import run_machine
from spec.machines.file_store import FileStoreMachine
from spec.variants.file_store import (
    CAUGHT_BY_MACHINE,
    NEEDS_OVERLAPPING_NAMESPACES,
    NEEDS_PLANTED_NODES,
    WRONG,
)
from tests.stateful import SEARCH_FOR_PINNED, SELF_CHECK
from tests.stateful.model_targets import ModelStoreMachine

CAUGHT = CAUGHT_BY_MACHINE + NEEDS_OVERLAPPING_NAMESPACES + NEEDS_PLANTED_NODES
# The search for a deliberately wrong variant: the dev profile's budget, no shrinking, no database.
FIND = settings(
    settings.get_profile("dev"), max_examples=400, phases=[Phase.explicit, Phase.generate], database=None
)


class HiCacheFileMachine(FileStoreMachine):
    target = staticmethod(HiCacheFile)


class FanoutMachine(FileStoreMachine):
    """The file-store machine with the stores built with ``layout="fanout"`` (F1-fanout)."""

    layout = "fanout"


@pytest.mark.clauses(
    "F1",
    "F3",
    "F4",
    "F5",
    "F6",
    "F7",
    "F8",
    "V1",
    "V2",
    "V3",
    "V4",
    "V5",
    "V6",
    "C1",
    "C2",
    "C3",
    "C4",
    "B2",
    "S3",
)
def test_file_store_refines_the_model_in_lock_step_with_faults_and_crashes(
    record_property: Callable[[str, object], None],
) -> None:
    figures = run_machine(HiCacheFileMachine)
    for key, value in figures.as_dict().items():
        record_property(key, value)
    assert figures.examples > 0


@pytest.mark.clauses(
    "F1-fanout", "F1", "F3", "F4", "F7", "F8", "V3", "V5", "V6", "C1", "C2", "C3", "C4", "B2", "S3"
)
def test_a_fanout_store_refines_the_model_in_lock_step_with_faults_and_crashes(
    record_property: Callable[[str, object], None],
) -> None:
    # The same machine, the store built with layout="fanout": pages, temp files, planted nodes and
    # crashes in the subdirectories.
    figures = run_machine(FanoutMachine.over(HiCacheFile))
    for key, value in figures.as_dict().items():
        record_property(key, value)
    assert figures.examples > 0


@pytest.mark.clauses("F1-fanout")
@pytest.mark.parametrize(
    "name", ["callback skipped when the file is already gone", "temp file left after a failed write"]
)
def test_the_fanout_machine_catches_wrong_variants_too(name: str) -> None:
    variant, _clause = WRONG[name]
    with pytest.raises(AssertionError):
        run_machine(FanoutMachine.over(variant), FIND)


@pytest.mark.clauses("F1", "F3", "F4", "F5", "F6", "F7", "F8", "V3", "V5", "C1", "C2", "C3", "C4", "B2", "S3")
@SELF_CHECK
def test_the_model_run_as_a_store_conforms_to_its_own_machine() -> None:
    # It checks the machine, not the model: a small budget is enough.
    budget = settings(parent=settings(), max_examples=min(settings().max_examples, 100))
    figures = run_machine(ModelStoreMachine, budget)
    assert figures.examples > 0 and figures.checks > figures.examples


@pytest.mark.clauses("F1", "F3", "F4", "F6", "F7", "V3", "V4", "V5", "V6", "C3", "S3")
@SEARCH_FOR_PINNED
@pytest.mark.parametrize("name", CAUGHT)
def test_machine_catches_the_deliberately_wrong_variant(name: str) -> None:
    variant, _clause = WRONG[name]
    with pytest.raises(AssertionError):
        run_machine(FileStoreMachine.over(variant), FIND)


# Pinned scenarios: the shortest run of the same machine that exposes each variant, so that each stays
# caught whatever the search explores (rules are called as Hypothesis would call them).
SMALL_CAP: dict[str, object] = {
    "cap": 6,
    "ratio": 1.0,
    "min_free": 0,
    "disk_size": 1 << 20,
    "metadata": True,
    "ttl": -1,
}
PINNED: dict[str, tuple[dict[str, object], list[tuple[str, dict[str, object]]]]] = {
    "callback skipped when the file is already gone": (
        SMALL_CAP,
        [
            ("set", {"key": "a", "value": b"xy"}),
            ("another_process_deletes", {"index": 0}),
            ("set", {"key": "b", "value": b"qwerty"}),
        ],
    ),
    "capacity not refunded on abort": (
        SMALL_CAP,
        [("fault", {"op": "write", "code": errno.EIO}), ("set", {"key": "a", "value": b"xy"})],
    ),
    "eviction wedged on EPERM": (
        SMALL_CAP,
        [
            ("set", {"key": "a", "value": b"Q"}),
            ("set", {"key": "b", "value": b"abc"}),
            ("file_becomes_unremovable", {"key": "a", "code": errno.EPERM}),
            ("set", {"key": "c", "value": b"12345"}),
        ],
    ),
    "capacity not refunded when a file vanished": (
        SMALL_CAP,
        [
            ("set", {"key": "a", "value": b"xy"}),
            ("another_process_deletes", {"index": 0}),
            ("get", {"key": "a"}),
        ],
    ),
    "exists ignores the metadata cache": (
        SMALL_CAP,
        [("set", {"key": "a", "value": b"xy"}), ("exists", {"key": "a"})],
    ),
    "start-up scan counts other namespaces' files": (
        SMALL_CAP,
        [("another_process_writes", {"key": "a", "value": b"xy", "foreign": True}), ("restart", {})],
    ),
    "namespace taken as a plain suffix": (
        SMALL_CAP,
        [("another_process_writes", {"key": "a", "value": b"xy", "foreign": True}), ("restart", {})],
    ),
    "temp file left after a failed write": (
        SMALL_CAP,
        [("fault", {"op": "replace", "code": errno.EIO}), ("set", {"key": "a", "value": b"xy"})],
    ),
    "any node taken for a page": (
        SMALL_CAP,
        [("another_user_plants_a_node", {"key": "a", "kind": "fifo"}), ("exists", {"key": "a"})],
    ),
    # the fourth write needs room: eviction goes down to floor(10 * 0.5) - 3 = 2 bytes, not to 10 - 3
    "eviction ratio ignored": (
        {**SMALL_CAP, "cap": 10, "ratio": 0.5},
        [("set", {"key": key, "value": b"abc"}) for key in "abcd"],
    ),
}


Pinned = dict[str, tuple[dict[str, object], list[tuple[str, dict[str, object]]]]]


def run_pinned(machine_class: type[FileStoreMachine], name: str, pinned: Pinned | None = None) -> None:
    """The pinned run ``name`` (of ``PINNED``, or of ``pinned``) on a fresh ``machine_class``, checked
    after its build and after each step."""
    config, steps = (PINNED if pinned is None else pinned)[name]
    machine: Any = machine_class()
    machine.build(**config)
    machine.check_step()
    for rule_name, kwargs in steps:
        getattr(machine, rule_name)(**kwargs)
        machine.check_step()


@pytest.mark.clauses("F1", "F3", "F4", "F6", "F7", "V3", "V4", "V5", "V6", "C3", "S3")
@pytest.mark.parametrize("name", CAUGHT)
def test_pinned_scenario_exposes_the_variant_and_passes_on_production(name: str) -> None:
    run_pinned(HiCacheFileMachine, name)
    with pytest.raises(AssertionError):
        run_pinned(FileStoreMachine.over(WRONG[name][0]), name)
