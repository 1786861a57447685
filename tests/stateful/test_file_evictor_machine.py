"""Lock-step refinement of LRUFileEvictor on its own, with writes held in flight across steps (V1-V6, C3)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import Phase, settings

from hicache import LRUFileEvictor
from spec.machines import run_machine
from spec.machines.file_evictor import file_evictor_machine
from tests.variants.file_store import EVICTOR_VARIANTS


@pytest.mark.clauses("V1", "V2", "V3", "V4", "V5", "V6", "C3")
def test_file_evictor_refines_the_model_in_lock_step(record_property: Callable[[str, object], None]) -> None:
    # Capped at 600 examples under the verify profile, as the other machines (the store's machine, which
    # drives the evictor too, keeps the full budget: it found a fake-filesystem bug at 1500).
    budget = settings(parent=settings(), max_examples=min(settings().max_examples, 600))
    figures = run_machine(file_evictor_machine(LRUFileEvictor), budget)
    for key, value in figures.as_dict().items():
        record_property(key, value)
    assert figures.examples > 0


@pytest.mark.clauses("V4", "V5", "V6")
@pytest.mark.parametrize("name", list(EVICTOR_VARIANTS))
def test_evictor_machine_catches_the_deliberately_wrong_evictor(name: str) -> None:
    budget = settings(settings.get_profile("dev"), phases=[Phase.explicit, Phase.generate], database=None)
    with pytest.raises(AssertionError):
        run_machine(file_evictor_machine(EVICTOR_VARIANTS[name]), budget)
