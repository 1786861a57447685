"""F8-bg, the start-up scan in the background: the file-store machine with the scan as a rule of its own.

``BackgroundScanMachine`` (spec/machines/file_store.py) builds the stores with ``startup_scan="background"``
and no scan thread (``stepped``: two listing nodes a step), and interleaves ``scan_step`` with every other
rule; each step compares the directory, the evictor's entries (C3, V2) and the beliefs with the model,
each batch checks V3 on what is known, the end of the scan C3 against the disk.  The two deliberately
wrong background scans of ``spec/variants/file_store.py`` (one adopts again a page deleted during the
scan, one counts a page written during the scan twice) must fail it: by search, and by a pinned run.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import settings

from hicache import HiCacheFile
from spec.machines import run_machine
from spec.machines.file_store import BackgroundScanMachine
from spec.variants.file_store import WRONG_BACKGROUND_SCAN
from tests.stateful import SEARCH_FOR_PINNED, SELF_CHECK
from tests.stateful.model_targets import BackgroundScanModelStoreMachine
from tests.stateful.test_file_store_machine import FIND, Pinned, run_pinned

CLAUSES = ("F8-bg", "F8", "F3", "F4", "F6", "F7", "V3", "V5", "V6", "C1", "C3", "C4")


@pytest.mark.clauses(*CLAUSES)
def test_a_store_scanning_in_the_background_refines_the_model_in_lock_step(
    record_property: Callable[[str, object], None],
) -> None:
    figures = run_machine(BackgroundScanMachine.over(HiCacheFile))
    for key, value in figures.as_dict().items():
        record_property(key, value)
    assert figures.examples > 0 and figures.checks > figures.examples


@pytest.mark.clauses(*CLAUSES)
@SELF_CHECK
def test_the_model_scanning_in_the_background_conforms_to_its_own_machine() -> None:
    budget = settings(parent=settings(), max_examples=min(settings().max_examples, 100))
    figures = run_machine(BackgroundScanModelStoreMachine, budget)
    assert figures.examples > 0 and figures.checks > figures.examples


@pytest.mark.clauses("F8-bg", "C3")
@SEARCH_FOR_PINNED
@pytest.mark.parametrize("name", list(WRONG_BACKGROUND_SCAN))
def test_the_machine_catches_each_wrong_background_scan(name: str) -> None:
    variant, _clause = WRONG_BACKGROUND_SCAN[name]
    with pytest.raises(AssertionError):
        run_machine(BackgroundScanMachine.over(variant), FIND)


# Pinned runs: three pages found (the listing's two batches: a and b, then c), no cap, beliefs on; the
# store changes c before the scan reaches it.
FOUND: dict[str, object] = {
    "cap": 0,
    "ratio": 1.0,
    "min_free": 0,
    "disk_size": 1 << 20,
    "metadata": True,
    "ttl": -1,
    "found": (("a", b"xy"), ("b", b"abc"), ("c", b"Q")),
}
PINNED: Pinned = {
    "scan re-adopts a page removed during the scan": (
        FOUND,
        [("scan_step", {}), ("delete", {"key": "c"}), ("scan_step", {})],
    ),
    "scan counts a page written during the scan twice": (
        FOUND,
        [
            ("delete", {"key": "c"}),
            ("set", {"key": "c", "value": b"12345"}),
            ("scan_step", {}),
            ("scan_step", {}),
        ],
    ),
}


@pytest.mark.clauses("F8-bg", "C3")
@pytest.mark.parametrize("name", list(PINNED))
def test_a_pinned_run_exposes_each_wrong_background_scan_and_passes_on_production(name: str) -> None:
    run_pinned(BackgroundScanMachine.over(HiCacheFile), name, PINNED)
    with pytest.raises(AssertionError, match="C3"):
        run_pinned(BackgroundScanMachine.over(WRONG_BACKGROUND_SCAN[name][0]), name, PINNED)


def test_every_wrong_background_scan_has_a_pinned_run() -> None:
    assert sorted(PINNED) == sorted(WRONG_BACKGROUND_SCAN)
