"""Bounded exhaustive refinement check of StorageExistenceCache (E2-E8) against ``models.existence_cache``.

The domain: 2 pools, 3 page hashes, a handful of short chains (empty, single
pages, ordered and reversed pairs, a repeated page, the whole chain), passed as
tuples and as one-shot generators (E8), extra covers, ``keep_pages`` 0, 1, past
the end and negative (E6's ValueError), bounds 0-3.

Refinement mapping: ``snapshot()`` (every ``(pool, hash)`` belief, least
recently used first) is the spec's state as is.  Production also keeps a
*primary pool* (the first pool added since construction or the last clear,
keyed by bare hashes), hidden from the spec, which changes how every later
call walks its keys: it is part of the fingerprint, so paths that differ only
there are explored separately.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from functools import partial
from typing import Any

from hicache.existence_cache import StorageExistenceCache

from ..models.existence_cache import StorageExistenceCacheSpec
from .explorer import Configuration, Op, Pair

__all__ = ["ExistenceCachePair", "configurations", "domain"]

POOLS = ("p", "q")
CHAINS: tuple[tuple[int, ...], ...] = ((), (1,), (2,), (1, 2), (2, 1), (2, 3), (1, 1), (1, 2, 3))
COVERS = (frozenset({2}), frozenset({1, 3}))


class ExistenceCachePair(Pair):
    """A StorageExistenceCache built by ``factory`` and the spec, driven in lock step."""

    def __init__(
        self, factory: Callable[[int], Any], max_entries: int, *, chains: Sequence[tuple[int, ...]] = CHAINS
    ) -> None:
        self.implementation = factory(max_entries)
        self.spec = StorageExistenceCacheSpec(max_entries)
        self.chains = tuple(chains)

    def operations(self) -> list[Op]:
        ops: list[Op] = []
        hashes = sorted({h for chain in self.chains for h in chain})
        for pool in POOLS:
            ops.extend(("add", pool, chain, form) for chain in self.chains for form in ("tuple", "iter"))
            ops.extend(("contains", pool, h) for h in hashes)
            ops.extend(
                ("contains_all", pool, chain, form) for chain in self.chains for form in ("tuple", "iter")
            )
            ops.extend(("covers_all", pool, chain, cover) for chain in self.chains for cover in COVERS)
            ops.extend(
                ("invalidate_beyond", pool, chain, keep) for chain in self.chains for keep in (0, 1, 9)
            )
            ops.append(("invalidate_beyond", pool, self.chains[-1], -1))
        ops.extend([("clear",), ("len",)])
        return ops

    def perform(self, op: Op) -> tuple[Any, Any]:
        name, *args = op
        if name == "len":
            return len(self.implementation), len(self.spec)
        if name in ("add", "contains_all"):  # each side gets its own pages: a generator is one-shot
            pool, chain, form = args
            return self.both(lambda side: getattr(side, str(name))(pool, _pages(chain, form)))
        return self.both(lambda side: getattr(side, str(name))(*args))

    def fingerprint(self) -> Hashable:
        # The primary pool is private production state; read only here, for deduplication.
        primary = getattr(self.implementation, "_primary", None)
        return self.abstract_implementation(), primary if primary in POOLS else None


def _pages(chain: Any, form: Hashable) -> Any:
    return iter(chain) if form == "iter" else chain


def configurations(
    factory: Callable[[int], Any] = StorageExistenceCache,
    bounds: Sequence[int] = (0, 1, 2, 3),
    chains: Sequence[tuple[int, ...]] = CHAINS,
) -> list[Configuration]:
    """One configuration per bound."""
    build = partial(ExistenceCachePair, factory, chains=chains)
    return [
        Configuration(f"cap={b} pools=2 hashes=3 chains={len(chains)}", partial(build, b)) for b in bounds
    ]


def domain(wide: bool) -> list[Configuration]:
    """CI: bounds 0-3.  Wide: bounds up to 4 (the fixpoint takes longer)."""
    return configurations(bounds=(0, 1, 2, 3, 4) if wide else (0, 1, 2, 3))
