"""Bounded exhaustive refinement check of MetadataCache (M2-M6, M6-lru, M8, M9) against its spec.

The domain: a few keys, every TTL kind (-1, 0, finite), bounds None/1/2, and a
fake clock that moves by one tick or lands *exactly on* a live key's expiry
instant or *one tick past* it.  Times are binary fractions, so ages are exact.

Refinement mapping: ``MetadataCache.snapshot()`` (live keys with births, in
eviction order) mapped to ``(key, age)`` pairs; with TTL -1 ages never matter
(nothing expires; eviction follows the order alone), so they are dropped, which
keeps the state space finite although the clock runs on.  States are
deduplicated on that abstraction plus the keys of entries that expired but
were not purged yet (production purges lazily; such an entry can still change
what a later ``add`` does, so it must not be merged away).

With ``stats=True`` every answer also carries the counter deltas (hits,
misses, evictions; M8), so the counters are checked transition by transition.

The family ``batch`` (M9; not in ``FAMILIES``, so that the planted bugs' shortest
depths stay what their tests say) adds ``add_many``, ``contains_many``,
``contains_prefix`` and ``remove_many`` over the first two keys in both orders and
over all keys.  ``eviction`` (M6-lru) builds both sides evicting by recency.
``domain()``, what ``python -m spec.modelcheck`` runs, has both orders and the batches.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from functools import partial
from typing import Any

from hicache.metadata_cache import MetadataCache

from ..models.metadata_cache import MetadataCacheSpec
from ..world.clock import FakeClock
from .explorer import Configuration, Op, Pair

__all__ = ["FAMILIES", "MetadataCachePair", "configurations", "domain"]

FAMILIES = frozenset({"add", "contains", "remove", "clear", "len", "advance", "expire"})
BATCHES = ("add_many", "contains_many", "contains_prefix", "remove_many")
COUNTERS = ("hits", "misses", "evictions")  # M8, compared as deltas step by step
START = 1000.0


def stored(cache: Any, clock: FakeClock, since: float = START) -> tuple[tuple[Hashable, float], ...]:
    """Every entry ``cache`` stores with its birth, expired ones not purged yet included: its ``snapshot()``
    (side-effect free) read with the fake clock wound back to ``since`` (the clock's start, when every
    birth was live) for that one reading: through the port, as the cache shows only live entries."""
    now = clock.now
    clock.now = since
    try:
        return tuple(cache.snapshot())
    finally:
        clock.now = now


class MetadataCachePair(Pair):
    """A MetadataCache built by ``factory`` and the spec, on one FakeClock."""

    def __init__(
        self,
        factory: Callable[..., Any],
        ttl: float,
        max_entries: int | None,
        *,
        keys: Sequence[str] = ("a", "b", "c"),
        tick: float = 0.5,
        families: frozenset[str] = FAMILIES,
        eviction: str = "birth",
        counting: bool = False,
    ) -> None:
        """``counting``: the implementation keeps the M8 counters (they are compared step by step)."""
        self.clock = FakeClock(START)
        kwargs: dict[str, Any] = {} if eviction == "birth" else {"eviction": eviction}
        self.implementation = factory(ttl, max_entries=max_entries, clock=self.clock, **kwargs)
        self.spec = MetadataCacheSpec(ttl, max_entries=max_entries, clock=self.clock, eviction=eviction)
        self.ttl, self.keys, self.tick, self.families = ttl, tuple(keys), tick, families
        self.counting = counting

    def operations(self) -> list[Op]:
        ops: list[Op] = [
            (name, k) for name in ("add", "contains", "remove") if name in self.families for k in self.keys
        ]
        ops.extend((name,) for name in ("clear", "len", "advance") if name in self.families)
        if "batch" in self.families:
            runs = [self.keys[:2], self.keys[1::-1], self.keys]
            ops.extend((name, run) for name in BATCHES for run in runs)
        if "expire" in self.families and self.ttl >= 0:
            for key in self.spec.live():
                ops.extend([("expire", key, "on"), ("expire", key, "past")])
        return ops

    def perform(self, op: Op) -> tuple[Any, Any]:
        name, *args = op
        impl, spec = self.implementation, self.spec
        if name == "advance":
            self.clock.advance(self.tick)
            return None, None
        if name == "expire":
            key, where = args
            self.clock.set(spec.live()[key] + self.ttl + (self.tick if where == "past" else 0.0))
            return None, None
        before = impl.stats() if self.counting else None
        spec_before = [getattr(spec, c) for c in COUNTERS]

        def on(side: Any) -> Any:
            if name == "len":
                return len(side)
            if name in BATCHES:  # a run of keys (a tuple), passed as a list
                return getattr(side, str(name))(list(args[0]))  # type: ignore[call-overload]
            return getattr(side, str(name))(*args)

        answers = on(impl), on(spec)
        if before is not None:
            after = impl.stats()
            got = tuple(getattr(after, c) - getattr(before, c) for c in COUNTERS)
            want = tuple(getattr(spec, c) - n for c, n in zip(COUNTERS, spec_before, strict=True))
            assert got == want, f"counter deltas (hits, misses, evictions) {got}, the spec's {want}"
        return answers

    def _ages(self, entries: Sequence[tuple[Hashable, float]]) -> Hashable:
        if self.ttl < 0:
            return tuple(k for k, _ in entries)
        now = self.clock()
        return tuple((k, now - b) for k, b in entries)

    def abstract_implementation(self) -> Hashable:
        return self._ages(self.implementation.snapshot())

    def abstract_spec(self) -> Hashable:
        return self._ages(list(self.spec.live().items()))

    def fingerprint(self) -> Hashable:
        """The abstraction plus the expired entries not purged yet (their age no longer matters)."""
        now, ttl = self.clock(), self.ttl
        stale = tuple(k for k, b in stored(self.implementation, self.clock) if ttl >= 0 and now - b > ttl)
        return self.abstract_implementation(), stale


TTLS = (-1, 0, 1.0)
BOUNDS = (None, 1, 2)


def configurations(
    factory: Callable[..., Any] | None = None,
    *,
    keys: Sequence[str] = ("a", "b", "c"),
    ttls: Sequence[float] = TTLS,
    bounds: Sequence[int | None] = BOUNDS,
    tick: float = 0.5,
    evictions: Sequence[str] = ("birth",),
    batches: bool = False,
) -> list[Configuration]:
    """One configuration per TTL kind, bound and eviction order, over ``factory`` or production (counters
    on and off); ``batches`` adds the M9 family."""
    families = FAMILIES | {"batch"} if batches else FAMILIES
    pair: dict[str, Any] = {"keys": keys, "tick": tick, "families": families}
    production = {"counters ": partial(MetadataCache, stats=True), "": partial(MetadataCache, stats=False)}
    return [
        Configuration(
            f"{label}{'' if eviction == 'birth' else eviction + ' '}ttl={ttl:g} cap={bound} keys={len(keys)}",
            partial(
                MetadataCachePair, build, ttl, bound, eviction=eviction, counting=label == "counters ", **pair
            ),
        )
        for label, build in ({"": factory} if factory is not None else production).items()
        for eviction in evictions
        for ttl in ttls
        for bound in bounds
    ]


def domain(wide: bool) -> list[Configuration]:
    """CI: 3 keys, TTL -1 / 0 / 0.5 / 1 on a 1/4 s tick, bounds None / 1 / 2, both eviction orders, the
    batches.  Wide: 4 keys, bound 3 too."""
    more: dict[str, Any] = {"keys": ("a", "b", "c", "d"), "bounds": (None, 1, 2, 3)} if wide else {}
    return configurations(ttls=(-1, 0, 0.5, 1.0), tick=0.25, evictions=("birth", "lru"), batches=True, **more)
