"""Lock-step refinement of HiCacheFile against its model on the fake filesystem (F1-F8, V1-V6, C1-C4, B2).

Every step compares the directory, the evictor's entries (C3) and the beliefs;
the rules check C1, C2, C4, F5 and F6 as properties.  The deliberately wrong
variants in ``tests/variants/file_store.py`` show that this machine fails when
it should.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import Phase, settings

from hicache import HiCacheFile
from spec.machines import run_machine
from spec.machines.file_store import file_store_machine
from tests.variants.file_store import CAUGHT_BY_MACHINE, VARIANTS


@pytest.mark.clauses(
    "F1", "F3", "F4", "F5", "F6", "F7", "F8", "V1", "V2", "V3", "V4", "V5", "V6", "C1", "C2", "C3", "C4", "B2"
)
def test_file_store_refines_the_model_in_lock_step_with_faults_and_crashes(
    record_property: Callable[[str, object], None],
) -> None:
    figures = run_machine(file_store_machine(HiCacheFile))
    for key, value in figures.as_dict().items():
        record_property(key, value)
    assert figures.examples > 0


@pytest.mark.clauses("F1", "F3", "F4", "F6", "F7", "V4", "V5", "V6", "C3")
@pytest.mark.parametrize("name", CAUGHT_BY_MACHINE)
def test_machine_catches_the_deliberately_wrong_variant(name: str) -> None:
    variant, _broken = VARIANTS[name]
    budget = settings(settings.get_profile("dev"), phases=[Phase.explicit, Phase.generate], database=None)
    with pytest.raises(AssertionError):
        run_machine(file_store_machine(variant), budget)
