"""V3-bg, a background evictor (issue 24 item 5): the model with ``background=True``, and the file machines
with ``eviction=background`` declared, over the model itself and over production turned into a background
evictor (``spec/variants``: ``BackgroundLRUFileEvictor``, ``BackgroundStore``).

The model's promise, step by step: a write never evicts (refused only above the cap); a pass (``evict``)
over the cap drains to ``floor(cap * ratio)``, a total between the two watermarks is left alone; the
pass never takes a write in flight, calls ``on_evict`` before each removal (V6); and the total stays
within what the last pass left plus the bytes admitted since.
"""

from __future__ import annotations

import pytest
from hypothesis import Phase, settings

from spec.machines import run_machine
from spec.machines.file_evictor import FileEvictorMachine
from spec.machines.file_store import FileStoreMachine
from spec.models.file_store import FileStoreModel
from spec.variants.file_evictor import BackgroundLRUFileEvictor
from spec.variants.file_store import BackgroundStore
from spec.world.clock import FakeClock
from tests.stateful.model_targets import BackgroundModelEvictorMachine, BackgroundModelStoreMachine

BACKGROUND = {"eviction": "background"}


def model(cap: int = 10, ratio: float = 0.5, min_free: int = 0) -> tuple[FileStoreModel, list[str]]:
    """A background evictor's model in an empty directory, and the victims it tells ``on_evict``."""
    victims: list[str] = []
    files: dict[str, tuple[bytes, float]] = {}

    def on_evict(key: str) -> None:
        assert key + ".bin" in files, f"V6: on_evict({key!r}) after its file was removed"
        victims.append(key)

    spec = FileStoreModel(
        namespace="",
        cap=cap,
        ratio=ratio,
        min_free=min_free,
        disk_size=1 << 20,
        metadata=False,
        ttl=-1,
        temp_max_age=0,
        clock=FakeClock(0.0),
        on_evict=on_evict,
        files=files,
        background=True,
    )
    return spec, victims


def write(spec: FileStoreModel, key: str, size: int) -> bool:
    """What the store does: reserve; when admitted, the file lands and the write commits."""
    if not spec.reserve(key, size):
        return False
    spec.files[spec.name(key)] = (b"x" * size, 0.0)
    spec.commit(key)
    return True


@pytest.mark.clauses("V3-bg")
def test_a_write_never_evicts_and_is_refused_only_above_the_cap() -> None:
    spec, victims = model(cap=10)
    assert all(write(spec, key, 4) for key in "abcd")  # 16 bytes under a cap of 10: admitted
    assert victims == [] and sum(e[1] for e in spec.lru) == 16
    assert not spec.reserve("e", 11)  # could never fit
    assert spec.over_cap_bound() == 16


@pytest.mark.clauses("V3-bg", "V6")
def test_a_pass_over_the_cap_drains_to_the_low_watermark_least_recently_used_first() -> None:
    spec, victims = model(cap=10, ratio=0.5)
    for key in "abcd":
        write(spec, key, 4)
    assert spec.evict()  # 16 > 10: evict down to floor(10 * 0.5) = 5
    assert victims == ["a", "b", "c"]
    assert spec.lru == [("d", 4, False)] and spec.drained()
    assert spec.over_cap_bound() == 4  # what the pass left, nothing admitted since


@pytest.mark.clauses("V3-bg")
def test_a_total_between_the_watermarks_is_left_alone() -> None:
    spec, victims = model(cap=10, ratio=0.5)
    write(spec, "a", 4)
    write(spec, "b", 4)
    assert spec.evict() and victims == []  # 8: over the low watermark, not over the cap
    assert [e[0] for e in spec.lru] == ["a", "b"]


@pytest.mark.clauses("V3-bg", "V5")
def test_a_pass_never_takes_a_write_in_flight_and_says_when_the_cap_does_not_hold() -> None:
    spec, victims = model(cap=10, ratio=0.5)
    write(spec, "a", 4)
    assert spec.reserve("b", 8)  # in flight: 12 > 10
    assert spec.evict()  # a goes; b, in flight, stays: 8, under the cap, over the low watermark
    assert victims == ["a"]
    assert spec.lru == [("b", 8, True)]
    assert spec.drained()  # no candidate left: the promise holds
    assert spec.reserve("c", 9)  # 17, in flight both
    assert not spec.evict()  # nothing can go: the pass says the cap does not hold
    assert victims == ["a"] and spec.drained()


@pytest.mark.clauses("V3-bg")
def test_the_machines_check_the_models_promise_too() -> None:
    """The model's own bound can fail: a total counted behind the accounting's back exceeds it."""
    spec, _victims = model(cap=10, ratio=0.5)
    write(spec, "a", 4)
    spec.evict()
    spec.lru.append(("z", 9, False))  # bytes that no reservation or adoption admitted
    assert sum(e[1] for e in spec.lru) > spec.over_cap_bound()
    spec.pass_over = True
    assert not spec.drained()  # 13 > 5 after a pass that began over the cap, with candidates left


SMALL = settings(max_examples=min(settings().max_examples, 60))


@pytest.mark.clauses("V3-bg", "V2", "V4", "V5", "V6", "S7", "C3")
def test_the_background_model_conforms_to_the_evictor_machine_declared_background() -> None:
    figures = run_machine(BackgroundModelEvictorMachine, SMALL)
    assert figures.examples > 0 and figures.checks > figures.examples


@pytest.mark.clauses("V3-bg", "F3", "F8", "C1", "C3")
def test_the_background_model_conforms_to_the_store_machine_declared_background() -> None:
    budget = settings(max_examples=min(settings().max_examples, 30))
    figures = run_machine(BackgroundModelStoreMachine, budget)
    assert figures.examples > 0 and figures.checks > figures.examples


@pytest.mark.clauses("V3-bg", "V5", "V6", "C3")
def test_production_turned_background_refines_the_model_declared_background() -> None:
    figures = run_machine(FileEvictorMachine.over(BackgroundLRUFileEvictor, **BACKGROUND), SMALL)
    assert figures.examples > 0


@pytest.mark.clauses("V3-bg", "F3", "C1", "C3")
def test_a_store_over_a_background_evictor_refines_the_model_declared_background() -> None:
    budget = settings(max_examples=min(settings().max_examples, 30))
    figures = run_machine(FileStoreMachine.over(BackgroundStore, **BACKGROUND), budget)
    assert figures.examples > 0


@pytest.mark.clauses("V3")
def test_undeclared_the_evictor_machine_fails_a_background_evictor_on_v3() -> None:
    find = settings(SMALL, phases=[Phase.explicit, Phase.generate], database=None, report_multiple_bugs=False)
    with pytest.raises(AssertionError, match=r"^V3: "):
        run_machine(FileEvictorMachine.over(BackgroundLRUFileEvictor), find)
