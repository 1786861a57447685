"""The bounded model check with the recency order (M6-lru) and the batches (M9), and the wrong variants
it must catch: a recency cache whose hit lengthens a life, a birth-ordered cache declared lru, a batch
that skips the recency touch, and a prefix that counts past the first miss."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any

import pytest

from hicache import MetadataCache
from spec.modelcheck.explorer import Configuration, explore
from spec.modelcheck.metadata_cache import FAMILIES, MetadataCachePair, configurations

WITH_BATCHES = FAMILIES | {"batch"}


class HitLengthensLife(MetadataCache):
    """DELIBERATELY WRONG (M3, M6-lru): a hit restarts the key's lifetime as well as its recency."""

    def contains(self, key: Hashable) -> bool:
        found = super().contains(key)
        if found:
            self.remove(key)
            self.add(key)
        return found


class BatchSkipsTheTouch(MetadataCache):
    """DELIBERATELY WRONG (M9, M6-lru): contains_many answers right but never makes its hits recent."""

    def contains_many(self, keys: Iterable[Hashable]) -> list[bool]:
        now = self._clock()
        with self._lock:
            return [
                (b := self._births.get(k)) is not None and (self._ttl < 0 or now - b <= self._ttl)
                for k in keys
            ]


class PrefixPastTheMiss(MetadataCache):
    """DELIBERATELY WRONG (M9): contains_prefix counts every live key, not only the leading ones."""

    def contains_prefix(self, keys: Iterable[Hashable]) -> int:
        return sum(self.contains_many(keys))


def _one(factory: Callable[..., Any], ttl: float, bound: int | None, eviction: str) -> Configuration:
    def build() -> MetadataCachePair:
        return MetadataCachePair(
            factory, ttl, bound, keys=("a", "b", "c"), tick=0.5, families=WITH_BATCHES, eviction=eviction
        )

    return Configuration(f"ttl={ttl} cap={bound} {eviction}", build)


@pytest.mark.clauses("M6-lru", "M9", "M2", "M3", "M4", "M5", "M6", "M8")
def test_production_passes_both_orders_with_the_batches_to_the_fixpoint(
    record_property: Callable[[str, object], None],
) -> None:
    configs = configurations(ttls=(-1, 0, 1.0), tick=0.5, evictions=("birth", "lru"), batches=True)
    results = [explore(config, 12) for config in configs]
    assert [r.counterexample.render() for r in results if r.counterexample is not None] == []
    assert all(r.complete for r in results)
    record_property("distinct_states", sum(r.states for r in results))


@pytest.mark.clauses("M6-lru", "M3")
def test_a_recency_cache_whose_hit_lengthens_a_life_is_caught() -> None:
    found = explore(_one(HitLengthensLife, 1.0, None, "lru"), 6).counterexample
    assert found is not None
    assert "contains" in [op[0] for op in found.trace], found.render()


@pytest.mark.clauses("M6-lru", "M6")
def test_a_birth_ordered_cache_declared_lru_is_caught_and_passes_as_birth() -> None:
    def birth_only(ttl: float, **kwargs: Any) -> MetadataCache:
        kwargs.pop("eviction", None)  # whatever the pair declares, this cache evicts by birth
        return MetadataCache(ttl, **kwargs)

    assert explore(_one(birth_only, -1, 2, "birth"), 6).ok
    found = explore(_one(birth_only, -1, 2, "lru"), 6).counterexample
    assert found is not None, "a hit then an eviction tells the orders apart"


@pytest.mark.clauses("M9", "M6-lru")
def test_a_batch_that_skips_the_recency_touch_is_caught() -> None:
    found = explore(_one(BatchSkipsTheTouch, -1, 2, "lru"), 6).counterexample
    assert found is not None
    assert "contains_many" in [op[0] for op in found.trace], found.render()


@pytest.mark.clauses("M9")
def test_a_prefix_that_counts_past_the_first_miss_is_caught() -> None:
    found = explore(_one(PrefixPastTheMiss, -1, None, "birth"), 4).counterexample
    assert found is not None
    assert found.trace[-1][0] == "contains_prefix", found.render()
