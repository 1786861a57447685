"""Bounded exhaustive refinement check of PooledExistenceCache (P1-P5) against ``spec.models.pool_beliefs``.

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
from functools import partial
from typing import Any

from hicache.pool_beliefs import PooledExistenceCache

from ..models.pool_beliefs import PooledExistenceCacheSpec
from .explorer import Configuration, Op, Pair

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
            cap = self.max_refs  # the domain's reference-count cap: no track_inflight past it
            over = {c for c in CHAINS if any(inflight.get(h, 0) + n > cap for h, n in Counter(c).items())}
            ops.extend(
                (n, pool, c) for n in POOL_OPS for c in CHAINS if n != "track_inflight" or c not in over
            )
            ops.extend(("contains", pool, h) for h in (1, 2))
            ops.extend(("invalidate_beyond", pool, chain, keep) for chain in CHAINS for keep in (0, 1))
            ops.append(("invalidate_beyond", pool, (1, 2), -1))
            ops.extend([("clear_pool", pool), ("clear_inflight_pool", pool), ("len", pool)])
        ops.extend([("clear",), ("clear_inflight",)])
        return ops

    def perform(self, op: Op) -> tuple[Any, Any]:
        name, *args = op

        def on(registry: Any) -> Any:
            if name in ("clear", "clear_inflight"):  # the registry's; "<name>_pool" is one pool's
                return getattr(registry, str(name))()
            beliefs = registry.pool(args[0])
            if name == "len":
                return len(beliefs)
            return getattr(beliefs, str(name).removesuffix("_pool"))(*args[1:])

        return self.both(on)

    def abstract(self, side: Any) -> Hashable:
        return tuple(
            (name, tuple(beliefs), tuple(sorted(inflight.items())))
            for name, (beliefs, inflight) in sorted(side.snapshot().items())
            if beliefs or inflight
        )


def configurations(
    factory: Callable[[int], Any] = PooledExistenceCache, bounds: Sequence[int] = (0, 1, 2), max_refs: int = 1
) -> list[Configuration]:
    """One configuration per bound."""
    build = partial(PoolBeliefsPair, factory, max_refs=max_refs)
    return [Configuration(f"cap={b} pools=2 hashes=2 refs<={max_refs}", partial(build, b)) for b in bounds]


def domain(wide: bool) -> list[Configuration]:
    """CI: in-flight counts up to 1.  Wide: up to 2 (a shared page in two launched writes)."""
    return configurations(max_refs=2 if wide else 1)
