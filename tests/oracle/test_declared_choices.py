"""O3: declared design choices.  A metadata cache may evict by birth (M6, the default) or by recency
(M6-lru); an existence cache may bound its beliefs globally (E2, the default) or per pool (P2's bound
behind E's API).  The target declares which (``--declare eviction=lru``, ``check(..., declare=...)``),
the spec follows the declaration, and the report prints it.  A hit never lengthens a life under either.

The two recency-ordered caches are written here on spec/variants' ``TextbookHardTTL``: an OrderedDict of
births, least recently used first, where a ``contains`` hit moves the key to the newest end and keeps
its birth; the second keeps the stale birth of an expired entry on re-add (the seed's M3 defect), so
whatever order is declared it breaks M3, and with ``lru`` declared M3 alone.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Collection, Hashable, Iterable, Sequence

import pytest

from spec.models.existence_cache import StorageExistenceCacheSpec, refuse_bad_capacity, refuse_bad_input
from spec.models.metadata_cache import MetadataCacheSpec, refuse_bad_key
from spec.oracle import OracleResult, check
from spec.oracle.__main__ import main
from spec.variants.existence_cache import TextbookExistenceLRU
from spec.variants.metadata_cache import TextbookHardTTL
from spec.world.clock import FakeClock
from tests.oracle.catalogue import named_first

EXAMPLES, STEPS = 200, 15  # the machine reaches the sequences these need in tens of examples
SEARCH = "an oracle search under a declared design choice"


class RecencyHardTTL(TextbookHardTTL):
    """Correct under M6-lru: the textbook's births in an OrderedDict, least recently used first; a full
    cache drops its expired entries, then the least recently used one."""

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1, as its base
        now = self.clock()
        birth = self.births.get(key)
        if birth is not None and self.live(birth, now):
            return
        self.store(key, now)

    def store(self, key: Hashable, now: float) -> None:
        self.births.pop(key, None)
        if self.max_entries is not None and len(self.births) >= self.max_entries:
            for stale in [k for k, b in self.births.items() if not self.live(b, now)]:
                del self.births[stale]
            if len(self.births) >= self.max_entries:
                self.evict()
        self.births[key] = now

    def contains(self, key: Hashable) -> bool:
        refuse_bad_key(key)  # B1, as its base
        birth = self.births.get(key)
        if birth is None or not self.live(birth, self.clock()):
            return False
        self.births.move_to_end(key)  # most recently used; the birth stays
        return True

    def __len__(self) -> int:
        now = self.clock()
        return sum(self.live(b, now) for b in self.births.values())


class RecencyStaleBirth(RecencyHardTTL):
    """M3: ``key in births`` short-cuts the add, so an expired entry keeps its old birth."""

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)  # B1, as its base
        if key not in self.births:
            self.store(key, self.clock())


class RecencyRefreshesOnHit(RecencyHardTTL):
    """M6-lru broken: a hit makes the key most recent and also restarts its life (a sliding TTL)."""

    def contains(self, key: Hashable) -> bool:
        found = super().contains(key)
        if found:
            self.births[key] = self.clock()
        return found


def first_clauses(result: OracleResult) -> set[str]:
    """The clause each failure names first; these targets have no snapshot(), so the oracle blames the
    clause of the operation whose answer diverged and lists the others it is consistent with (issue 23):
    a failure inferred that way counts for each of them."""
    return {clause for failure in result.failures for clause in named_first(failure)}


@pytest.mark.clauses("O3", "M6-lru", "M6")
@pytest.mark.slow(SEARCH)
def test_a_correct_recency_ordered_cache_passes_with_lru_declared() -> None:
    result = check(
        "metadata-cache", RecencyHardTTL, declare={"eviction": "lru"}, max_examples=EXAMPLES, steps=STEPS
    )
    assert result.passed, result.summary()
    assert result.declared == {"eviction": "lru"}
    assert "declared: eviction=lru" in result.summary()


@pytest.mark.clauses("O3", "M6")
@pytest.mark.slow(SEARCH)
def test_the_same_cache_fails_m6_with_birth_order_declared_and_only_m6() -> None:
    result = check("metadata-cache", RecencyHardTTL, max_examples=EXAMPLES, steps=STEPS)
    assert result.verdict == "FAIL", result.summary()
    assert result.declared == {"eviction": "birth"}
    assert "M6" in first_clauses(result), result.summary()
    assert "M3" not in [f.clauses[0] for f in result.failures], result.summary()


@pytest.mark.clauses("O3", "M6-lru", "M3")
@pytest.mark.slow(SEARCH)
def test_the_stale_birth_recency_cache_fails_m3_alone_with_lru_declared() -> None:
    result = check(
        "metadata-cache", RecencyStaleBirth, declare={"eviction": "lru"}, max_examples=EXAMPLES, steps=STEPS
    )
    assert result.verdict == "FAIL", result.summary()
    assert "M3" in first_clauses(result), result.summary()
    assert "M6" not in [f.clauses[0] for f in result.failures], result.summary()
    assert result.failures[0]["calls"] <= 4, result.summary()
    # O8: M6 never fails; it is passed, or "not checked" when the search stopped at M3's group (which
    # cannot be set aside), or named among the clauses an inferred blame's counterexample is consistent
    # with (its add carries M6), never claimed without its budget
    consistent = {c for f in result.failures for c in f.consistent_with}
    assert "M6" in {*result.passed_clauses, *result.not_checked, *consistent}, result.summary()


@pytest.mark.clauses("O3", "M3", "M6")
@pytest.mark.slow(SEARCH)
def test_the_stale_birth_recency_cache_fails_m3_with_birth_order_declared_too() -> None:
    # Two failures in one run: M6 is looked for with M3 set aside (O2), so this one runs longer.
    result = check("metadata-cache", RecencyStaleBirth, max_examples=3 * EXAMPLES, steps=STEPS)
    assert result.verdict == "FAIL", result.summary()
    assert {"M3", "M6"} <= first_clauses(result), result.summary()


@pytest.mark.clauses("O3", "M6-lru", "M3")
@pytest.mark.slow(SEARCH)
def test_declaring_lru_does_not_excuse_a_hit_that_lengthens_a_life() -> None:
    """The check can fail: a recency cache whose hit also restarts the lifetime is caught under lru."""
    result = check(
        "metadata-cache",
        RecencyRefreshesOnHit,
        declare={"eviction": "lru"},
        max_examples=EXAMPLES,
        steps=STEPS,
    )
    assert result.verdict == "FAIL", result.summary()


@pytest.mark.clauses("O3", "M6")
@pytest.mark.slow(SEARCH)
def test_a_birth_ordered_cache_declared_lru_fails_m6() -> None:
    """The declaration is followed, not merely printed: the textbook cache evicts by birth, so with lru
    declared its bound evicts the wrong key."""
    result = check(
        "metadata-cache", TextbookHardTTL, declare={"eviction": "lru"}, max_examples=EXAMPLES, steps=STEPS
    )
    assert result.verdict == "FAIL", result.summary()
    assert "M6" in first_clauses(result), result.summary()


@pytest.mark.clauses("M6-lru")
def test_the_lru_model_evicts_the_least_recently_used_and_keeps_births() -> None:
    clock = FakeClock(10.0)
    model = MetadataCacheSpec(1.0, max_entries=2, clock=clock, eviction="lru")
    model.add("a")
    clock.advance(0.5)
    model.add("b")
    assert model.contains("a")  # a hit: "a" is now the most recently used, born at 10.0 still
    model.add("c")  # full: "b" is the least recently used
    assert model.live() == {"a": 10.0, "c": 10.5}
    clock.advance(0.5)
    assert model.contains("a")  # exactly birth + ttl: live (M2)
    clock.advance(0.125)
    assert not model.contains("a")  # the hits did not lengthen its life


@pytest.mark.clauses("O3")
@pytest.mark.slow(SEARCH)
def test_the_cli_takes_the_declaration_and_prints_it_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    target = "tests.oracle.test_declared_choices:RecencyHardTTL"
    argv = ["metadata-cache", target, "--max-examples", "300", "--steps", "15", "--json"]
    assert main([*argv, "--declare", "eviction=lru"]) == 0
    assert json.loads(capsys.readouterr().out)["declared"] == {"eviction": "lru"}
    assert main(argv) == 1  # birth order declared (the default): the recency cache fails M6
    assert json.loads(capsys.readouterr().out)["declared"] == {"eviction": "birth"}


@pytest.mark.clauses("O3", "O5")
@pytest.mark.parametrize(
    ("declaration", "message"),
    [
        ("eviction=fifo", "eviction is one of birth, lru"),
        ("order=lru", "has no such choice (choices: eviction)"),
        ("eviction", "--declare takes CHOICE=VALUE"),
    ],
)
def test_an_unknown_declaration_is_a_usage_error(
    declaration: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    target = "tests.oracle.test_declared_choices:RecencyHardTTL"
    assert main(["metadata-cache", target, "--declare", declaration]) == 2
    assert message in capsys.readouterr().err


class PerPoolBoundBeliefs:
    """Correct with a bound per pool declared: E's API over one OrderedDict of hashes per pool, least
    recently used first, each pool bounded by ``max_entries`` on its own."""

    def __init__(self, max_entries: int = 512 * 1024) -> None:
        refuse_bad_capacity(max_entries)  # B1 (E1), as production
        self.max_entries = max_entries
        self.pools: dict[Hashable, OrderedDict[Hashable, None]] = {}

    def add(self, pool: Hashable, hashes: Iterable[Hashable]) -> None:
        refuse_bad_input(pool, hashes=hashes)  # B1, as production
        beliefs = self.pools.setdefault(pool, OrderedDict())
        for h in hashes:
            beliefs[h] = None
            beliefs.move_to_end(h)
        while len(beliefs) > self.max_entries:
            beliefs.popitem(last=False)

    def contains(self, pool: Hashable, page_hash: Hashable) -> bool:
        return self.covers_all(pool, [page_hash])

    def contains_all(self, pool: Hashable, hashes: Iterable[Hashable]) -> bool:
        return self.covers_all(pool, hashes)

    def covers_all(
        self, pool: Hashable, hashes: Iterable[Hashable], extra_cover: Collection[Hashable] = frozenset()
    ) -> bool:
        refuse_bad_input(pool, hashes=hashes, extra_cover=extra_cover)
        beliefs = self.pools.get(pool, OrderedDict())
        for h in hashes:
            if h in beliefs:
                beliefs.move_to_end(h)
            elif h not in extra_cover:
                return False
        return True

    def invalidate_beyond(self, pool: Hashable, hashes: Sequence[Hashable], keep_pages: int) -> None:
        refuse_bad_input(pool, keep_pages, hashes)
        beliefs = self.pools.get(pool, OrderedDict())
        for h in hashes[keep_pages:]:
            beliefs.pop(h, None)

    def clear(self) -> None:
        self.pools.clear()

    def __len__(self) -> int:
        return sum(len(beliefs) for beliefs in self.pools.values())

    def snapshot(self) -> list[tuple[Hashable, Hashable]]:
        return [(pool, h) for pool, beliefs in self.pools.items() for h in beliefs]


PER_POOL = {"bound": "per-pool"}


@pytest.mark.clauses("O3", "P2", "E2")
@pytest.mark.slow(SEARCH)
def test_an_existence_cache_bounded_per_pool_passes_with_that_bound_declared() -> None:
    result = check(
        "existence-cache", PerPoolBoundBeliefs, declare=PER_POOL, max_examples=EXAMPLES, steps=STEPS
    )
    assert result.passed, result.summary()
    assert result.declared == PER_POOL


@pytest.mark.clauses("O3", "E2")
@pytest.mark.slow(SEARCH)
def test_the_same_cache_fails_e2_with_the_global_bound() -> None:
    result = check("existence-cache", PerPoolBoundBeliefs, max_examples=EXAMPLES, steps=STEPS)
    assert result.verdict == "FAIL", result.summary()
    assert result.declared == {"bound": "global"}
    assert any("E2" in f["clauses"] for f in result.failures), result.summary()


@pytest.mark.clauses("O3", "P2")
@pytest.mark.slow(SEARCH)
def test_a_globally_bounded_cache_fails_with_a_bound_per_pool_declared() -> None:
    """The declaration is followed: one pool's adds evict another pool's beliefs, which a bound per
    pool forbids."""
    result = check(
        "existence-cache", TextbookExistenceLRU, declare=PER_POOL, max_examples=EXAMPLES, steps=STEPS
    )
    assert result.verdict == "FAIL", result.summary()


@pytest.mark.clauses("P2")
def test_the_per_pool_model_trims_only_the_pool_that_grew() -> None:
    model = StorageExistenceCacheSpec(2, bound="per-pool")
    model.add("p", ["a", "b"])
    model.add("q", ["c", "d", "e"])
    assert model.snapshot() == [("p", "a"), ("p", "b"), ("q", "d"), ("q", "e")]
    assert len(model) == 4  # twice the bound, over two pools
