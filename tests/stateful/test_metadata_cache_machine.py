"""Lock-step refinement of MetadataCache against its spec (M2-M6, M6-lru, M8, M9).

The same machine runs over the production class, in both its forms at once (with counters and
without), under each eviction order (``"birth"``, M6, and ``"lru"``, M6-lru), with the batches (M9),
and over the spec itself (the spec must trivially conform: that checks the machine, not
the spec).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import partial
from typing import Any

import pytest
from hypothesis import settings

from hicache import MetadataCache, MetadataCacheStats
from spec.machines import run_machine
from spec.machines.metadata_cache import MetadataCacheMachine
from spec.models.metadata_cache import MetadataCacheSpec
from spec.world.clock import FakeClock
from tests.stateful import implementations

# Which clause a disagreement between the two production forms breaks, by method.
_CLAUSE_OF = {
    "contains": "M4",
    "__len__": "M5",
    "snapshot": "M3",
    "contains_many": "M9",
    "contains_prefix": "M9",
}


class BothProductionForms:
    """MetadataCache with counters and without, driven by one machine run: every call goes to both.

    ``contains`` is a closure specialized per form at construction (by ``stats``), so both forms must refine
    the spec.  One run of the machine drives both with the same sequence of operations, instead of two
    runs generating a sequence each: the same examples and steps for each form, half of Hypothesis's
    work.  Their answers must agree (a disagreement names the clause), and the machine compares the
    agreed answer with the spec; the counters (M8) come from the form that keeps them.
    """

    def __init__(self, ttl: float, *, clock: Callable[[], float], **kwargs: Any) -> None:
        # Each form reads the machine's clock through its own counter (the machine, seeing none of
        # them, counts no readings of the pair); _both checks each form's: one per call (M9's instant).
        self.readings = {"counters": ReadingsOf(clock), "plain": ReadingsOf(clock)}
        self.counters = MetadataCache(ttl, stats=True, clock=self.readings["counters"], **kwargs)
        self.plain = MetadataCache(ttl, clock=self.readings["plain"], **kwargs)

    def _both(self, method: str, *args: Any) -> Any:
        before = {form: readings.count for form, readings in self.readings.items()}
        answer = getattr(self.counters, method)(*args)
        other = getattr(self.plain, method)(*args)
        reads = max(readings.count - before[form] for form, readings in self.readings.items())
        assert reads <= 1, f"M9: {method}{args!r} read the clock {reads} times in one form (one instant)"
        clause = _CLAUSE_OF.get(method, "M4")
        assert answer == other, (
            f"{clause}: {method}{args!r} answers {answer!r} with counters and {other!r} without"
        )
        return answer

    def add(self, key: Hashable) -> None:
        self._both("add", key)

    def contains(self, key: Hashable) -> bool:
        return bool(self._both("contains", key))

    def remove(self, key: Hashable) -> None:
        self._both("remove", key)

    def add_many(self, keys: list[Hashable]) -> None:
        self._both("add_many", keys)

    def contains_many(self, keys: list[Hashable]) -> list[bool]:
        return list(self._both("contains_many", keys))

    def contains_prefix(self, keys: list[Hashable]) -> int:
        return int(self._both("contains_prefix", keys))

    def remove_many(self, keys: list[Hashable]) -> None:
        self._both("remove_many", keys)

    def clear(self) -> None:
        self._both("clear")

    def __len__(self) -> int:
        return int(self._both("__len__"))

    def snapshot(self) -> Any:
        return self._both("snapshot")

    def check_invariants(self) -> None:
        self.counters.check_invariants()
        self.plain.check_invariants()

    def stats(self) -> MetadataCacheStats:
        return self.counters.stats()


class ReadingsOf:
    """A view of the machine's FakeClock that counts its own readings (and reads ``now`` without
    calling the clock, so the machine's own count is not doubled by the pair of forms)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.count = 0

    def __call__(self) -> float:
        self.count += 1
        now = getattr(self.clock, "now", None)
        return now if isinstance(now, float) else self.clock()


class ProductionMachine(MetadataCacheMachine):
    target = staticmethod(BothProductionForms)


# Each declares the order its bound evicts in: M6 "birth" (the default) or M6-lru "lru".
MACHINES: dict[str, type[MetadataCacheMachine]] = {
    "production": ProductionMachine,
    "production lru": MetadataCacheMachine.over(partial(BothProductionForms, eviction="lru"), eviction="lru"),
    "spec": MetadataCacheMachine.over(MetadataCacheSpec),
    "spec lru": MetadataCacheMachine.over(partial(MetadataCacheSpec, eviction="lru"), eviction="lru"),
}


@pytest.mark.clauses("M2", "M3", "M4", "M5", "M6", "M6-lru", "M8", "M9")
@pytest.mark.parametrize("name", implementations(MACHINES))
def test_metadata_cache_refines_the_spec_in_lock_step(
    name: str, record_property: Callable[[str, object], None]
) -> None:
    # The spec conforming to itself checks the machine, not the spec: a small budget is enough (as for the
    # E and P machines).  The production forms (with counters and without) run the profile's whole budget,
    # under each eviction order.
    budget = settings(parent=settings(), max_examples=100) if name.startswith("spec") else settings()
    figures = run_machine(MACHINES[name], budget)
    for key, value in figures.as_dict().items():
        record_property(key, value)
    assert figures.examples > 0


@pytest.mark.clauses("M4", "M5")
def test_the_two_forms_must_agree_and_a_disagreement_names_the_clause() -> None:
    """The machine sees one answer per call; a form whose answer differs from the other's must still fail.
    Here the form without counters is given a different lifetime, so it answers differently at the
    same instant."""
    clock = FakeClock(10.0)
    both = BothProductionForms(1.0, clock=clock)
    both.plain = MetadataCache(5.0, clock=clock)
    both.add("k")
    assert both.contains("k")
    clock.advance(2.0)
    with pytest.raises(AssertionError, match=r"^M4: contains\('k',\) answers False with counters and True"):
        both.contains("k")
    with pytest.raises(AssertionError, match=r"^M5: __len__\(\) answers 0 with counters and 1 without"):
        len(both)
