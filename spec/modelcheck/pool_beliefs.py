"""Bounded exhaustive refinement check of PooledExistenceCache (P1-P5) against ``spec.pool_beliefs``.

The domain: 2 pools, 2 page hashes, short chains (empty, singles, both
orders, a repeated page), bounds 0-2, and in-flight reference counts capped
at ``max_refs`` per hash (a ``track_inflight`` that would pass the cap is not
enabled: the counts would otherwise grow without end).

Refinement mapping: the registry's ``snapshot()`` (per pool: beliefs least
recently used first, in-flight counts), keeping only the pools that hold
something, by name: an empty pool behaves exactly like one never used (P1
creates pools on first use), so the two are one state.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from hicache.pool_beliefs import PooledExistenceCache
from spec.modelcheck.existence_cache import outcome
from spec.modelcheck.explorer import Configuration, Op, Pair
from spec.pool_beliefs import PooledExistenceCacheSpec

__all__ = ["PoolBeliefsPair", "configurations", "domain"]

POOLS = ("p", "q")
CHAINS: tuple[tuple[int, ...], ...] = ((), (1,), (2,), (1, 2), (2, 1), (1, 1))
POOL_OPS = ("add", "contains_all", "covered", "track_inflight", "untrack_inflight")


class PoolBeliefsPair(Pair):
    """A registry built by ``factory`` and the spec registry, driven in lock step."""

    def __init__(self, factory: Callable[[int], Any], max_entries: int, *, max_refs: int = 1) -> None:
        self.implementation = factory(max_entries)
        self.spec = PooledExistenceCacheSpec(max_entries)
        self.max_refs = max_refs

    def operations(self) -> list[Op]:
        ops: list[Op] = []
        for pool in POOLS:
            inflight = self.spec.pool(pool).inflight if pool in self.spec.pools else {}
            for name in POOL_OPS:
                for chain in CHAINS:
                    more = Counter(chain)
                    if name == "track_inflight" and any(
                        inflight.get(h, 0) + n > self.max_refs for h, n in more.items()
                    ):
                        continue  # the reference-count cap of the domain
                    ops.append((name, pool, chain))
            ops.extend(("contains", pool, h) for h in (1, 2))
            ops.extend(("invalidate_beyond", pool, chain, keep) for chain in CHAINS for keep in (0, 1))
            ops.append(("invalidate_beyond", pool, (1, 2), -1))
            ops.extend([("clear_pool", pool), ("clear_inflight_pool", pool), ("len", pool)])
        ops.extend([("clear",), ("clear_inflight",)])
        return ops

    def perform(self, op: Op) -> tuple[Any, Any]:
        name, *args = op
        if name in ("clear", "clear_inflight"):
            return getattr(self.implementation, str(name))(), getattr(self.spec, str(name))()
        pool, *rest = args

        def on(registry: Any) -> Any:
            beliefs = registry.pool(pool)
            if name == "len":
                return len(beliefs)
            if name in ("clear_pool", "clear_inflight_pool"):
                return getattr(beliefs, str(name).removesuffix("_pool"))()
            return getattr(beliefs, str(name))(*rest)

        return outcome(lambda: on(self.implementation)), outcome(lambda: on(self.spec))

    @staticmethod
    def _abstract(snapshot: dict[Hashable, tuple[list[Hashable], dict[Hashable, int]]]) -> Hashable:
        return tuple(
            (name, tuple(beliefs), tuple(sorted(inflight.items())))
            for name, (beliefs, inflight) in sorted(snapshot.items())
            if beliefs or inflight
        )

    def abstract_implementation(self) -> Hashable:
        return self._abstract(self.implementation.snapshot())

    def abstract_spec(self) -> Hashable:
        return self._abstract(self.spec.snapshot())

    def check_invariants(self) -> None:
        check = getattr(self.implementation, "check_invariants", None)
        if check is not None:
            check()


def configurations(
    factory: Callable[[int], Any] = PooledExistenceCache, bounds: Sequence[int] = (0, 1, 2), max_refs: int = 1
) -> list[Configuration]:
    """One configuration per bound."""

    def config(bound: int) -> Configuration:
        def build() -> Pair:
            return PoolBeliefsPair(factory, bound, max_refs=max_refs)

        return Configuration(f"cap={bound} pools=2 hashes=2 refs<={max_refs}", build)

    return [config(bound) for bound in bounds]


def domain(wide: bool) -> list[Configuration]:
    """CI: in-flight counts up to 1.  Wide: up to 2 (a shared page in two launched writes)."""
    return configurations(max_refs=2 if wide else 1)
