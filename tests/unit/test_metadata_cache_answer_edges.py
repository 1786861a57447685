"""MetadataCache answers pinned for mutation testing (docs/MUTATION.md): every way of asking (``contains``,
``contains_many``, ``contains_prefix``; M4, M9) in every mode (``"birth"``/``"lru"``, counting or not) at
a TTL of 0 and below one second, at the inclusive boundary and just past it; a cache whose beliefs never
expire never reads its clock to answer; the exact message of a non-str ``eviction`` (B1).

The run of 2026-12-01 left these mutants alive: the stateful machine and the model checker rarely draw
a TTL of 0 or one below a second under ``"lru"``, where ``contains_many``, ``contains_prefix`` and the
non-counting ``contains`` each have their own TTL test.
"""

from __future__ import annotations

import pytest

from hicache import MetadataCache
from spec.world.clock import CountingClock, FakeClock

MODES = [
    pytest.param(eviction, stats, id=f"{eviction}-{'counting' if stats else 'plain'}")
    for eviction in ("birth", "lru")
    for stats in (False, True)
]


def answers(cache: MetadataCache, key: str) -> tuple[bool, bool, bool]:
    """``key``'s liveness as each way of asking answers it (a prefix of one key alive counts 1)."""
    return cache.contains(key), cache.contains_many([key]) == [True], cache.contains_prefix([key]) == 1


@pytest.mark.clauses("M4", "M9", "M6-lru")
@pytest.mark.parametrize(("eviction", "stats"), MODES)
@pytest.mark.parametrize("ttl", [0.0, 0.5])
def test_every_way_of_asking_answers_at_the_boundary_and_just_past_it(
    eviction: str, stats: bool, ttl: float
) -> None:
    clock = FakeClock()
    cache = MetadataCache(ttl, clock=clock, stats=stats, eviction=eviction)
    cache.add("a")
    assert answers(cache, "a") == (True, True, True)  # born now: alive
    clock.advance(ttl)
    assert answers(cache, "a") == (True, True, True)  # at exactly birth + ttl: still alive (inclusive)
    clock.advance(0.25)
    assert answers(cache, "a") == (False, False, False)  # just past it: dead, however it is asked
    assert answers(cache, "never added") == (False, False, False)
    cache.check_invariants()


@pytest.mark.clauses("M4", "M9")
@pytest.mark.parametrize(("eviction", "stats"), MODES)
def test_a_cache_whose_beliefs_never_expire_never_reads_its_clock_to_answer(
    eviction: str, stats: bool
) -> None:
    clock = CountingClock()
    cache = MetadataCache(-1, clock=clock, stats=stats, eviction=eviction)
    cache.add_many(["a", "b"])
    clock.reads = 0
    clock.advance(10**9)
    assert answers(cache, "a") == (True, True, True)
    assert cache.contains_many(["b", "x", "a"]) == [True, False, True]
    assert cache.contains_prefix(["a", "b", "x", "a"]) == 2
    assert clock.reads == 0


@pytest.mark.clauses("B1")
def test_a_non_str_eviction_is_rejected_with_an_exact_message() -> None:
    with pytest.raises(TypeError, match=r"^eviction must be a str, 'birth' or 'lru', got int 3$"):
        MetadataCache(1.0, eviction=3)  # type: ignore[arg-type]
