"""Executable model of the StorageExistenceCache (docs/SEMANTICS.md E1-E8).

The whole state is ``beliefs``: a list of distinct ``(pool, page_hash)``
pairs, least recently used first.  Each operation is a few lines over it.  The
pure functions carry PEP 316 contracts for ``crosshair check``; the class
wraps them behind the production constructor and methods so the lock-step
machine drives model and implementation alike.

Where docs/SEMANTICS.md leaves a choice open, the model fixes it:

* B1: every bad input E names is refused before any change
  (:func:`refuse_bad_input`, :func:`refuse_bad_capacity`), with a message that
  begins with the parameter's name; ``invalidate_beyond`` checks
  ``keep_pages`` before anything else (E6).
* Pools and hashes are compared with ``==``, as dict keys are.
* The bound is global (E2) unless the implementation declares it per pool
  (``bound="per-pool"``, O3: the bound of P2 behind E's API): then ``add``
  trims only its own pool, and the order that matters is each pool's own
  (``by_pool``), since no pool's beliefs can evict another's.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Sequence

from .refusals import refuse_bad_capacity, refuse_bad_input

__all__ = [
    "BOUNDS",
    "ContainsWithoutRefresh",
    "StorageExistenceCacheSpec",
    "add",
    "by_pool",
    "contains",
    "covers_all",
    "invalidate_beyond",
    "refuse_bad_capacity",
    "refuse_bad_input",
    "touch",
    "trim",
    "trim_pool",
]

BOUNDS = ("global", "per-pool")  # E2, and P2's bound declared behind E's API (O3); the first is the default

Belief = tuple[Hashable, Hashable]
Beliefs = list[Belief]


def touch(beliefs: Beliefs, belief: Belief) -> Beliefs:
    """E2, E3: ``belief`` becomes the most recently used (inserted if new).

    pre: len(set(beliefs)) == len(beliefs)
    post: __return__[-1] == belief
    post: len(set(__return__)) == len(__return__)
    post: len(__return__) == len(beliefs) + (0 if belief in beliefs else 1)
    """
    return [b for b in beliefs if b != belief] + [belief]


def trim(beliefs: Beliefs, max_entries: int) -> Beliefs:
    """E1, E2: drop the least recently used until at most ``max_entries`` remain.

    pre: max_entries >= 0
    post: len(__return__) == min(len(beliefs), max_entries)
    post: __return__ == beliefs[len(beliefs) - len(__return__):]
    """
    return beliefs[max(0, len(beliefs) - max_entries) :]


def trim_pool(beliefs: Beliefs, pool: Hashable, max_entries: int) -> Beliefs:
    """P2's bound: drop ``pool``'s least recently used beliefs until at most ``max_entries`` of it remain.

    pre: max_entries >= 0
    post: len([b for b in __return__ if b[0] == pool]) <= max_entries
    post: [b for b in __return__ if b[0] != pool] == [b for b in beliefs if b[0] != pool]
    """
    mine = [b for b in beliefs if b[0] == pool]
    dropped = mine[: max(0, len(mine) - max_entries)]
    return [b for b in beliefs if b not in dropped]


def by_pool(beliefs: Iterable[Belief]) -> dict[Hashable, list[Hashable]]:
    """Each pool's hashes, least recently used first: what a bound per pool can observe of the order."""
    pools: dict[Hashable, list[Hashable]] = {}
    for pool, h in beliefs:
        pools.setdefault(pool, []).append(h)
    return pools


def add(
    beliefs: Beliefs, pool: Hashable, hashes: list[Hashable], max_entries: int, per_pool: bool = False
) -> Beliefs:
    """E2: each page in order becomes most recently used, then trim to the bound (the pool's own, with
    ``per_pool``).

    pre: max_entries >= 0
    pre: len(set(beliefs)) == len(beliefs)
    post: per_pool or len(__return__) <= max_entries
    post: not hashes or max_entries == 0 or __return__[-1] == (pool, hashes[-1])
    """
    for h in hashes:
        beliefs = touch(beliefs, (pool, h))
    return trim_pool(beliefs, pool, max_entries) if per_pool else trim(beliefs, max_entries)


def contains(beliefs: Beliefs, pool: Hashable, h: Hashable) -> tuple[bool, Beliefs]:
    """E3: believed pages answer True and become most recently used.

    pre: len(set(beliefs)) == len(beliefs)
    post: __return__[0] == ((pool, h) in beliefs)
    post: len(__return__[1]) == len(beliefs)
    """
    if (pool, h) in beliefs:
        return True, touch(beliefs, (pool, h))
    return False, beliefs


def covers_all(
    beliefs: Beliefs, pool: Hashable, hashes: list[Hashable], extra_cover: Collection[Hashable]
) -> tuple[bool, Beliefs]:
    """E4, E5: walk in order, touching believed pages, skipping ``extra_cover`` pages untouched,
    stopping at the first page that is neither.  With no ``extra_cover`` this is ``contains_all``.

    pre: len(set(beliefs)) == len(beliefs)
    post: len(__return__[1]) == len(beliefs)
    post: __return__[0] or len(hashes) > 0
    post: __return__[0] == all((pool, h) in beliefs or h in extra_cover for h in hashes)
    """
    for h in hashes:
        if (pool, h) in beliefs:
            beliefs = touch(beliefs, (pool, h))
        elif h not in extra_cover:
            return False, beliefs
    return True, beliefs


def invalidate_beyond(beliefs: Beliefs, pool: Hashable, hashes: list[Hashable], keep_pages: int) -> Beliefs:
    """E6: drop the beliefs for ``hashes[keep_pages:]``; the others keep their order.

    pre: keep_pages >= 0
    pre: len(set(beliefs)) == len(beliefs)
    post: all((pool, h) not in __return__ for h in hashes[keep_pages:])
    post: __return__ == [b for b in beliefs if b in __return__]
    post: keep_pages < len(hashes) or __return__ == beliefs
    """
    dropped = hashes[keep_pages:]
    return [b for b in beliefs if not (b[0] == pool and b[1] in dropped)]


class StorageExistenceCacheSpec:
    """The model behind the production constructor: ``StorageExistenceCacheSpec(max_entries)``;
    ``bound`` is the declared bound, ``"global"`` (E2) or ``"per-pool"``.

    The bad inputs E's methods and constructor name are refused as B1 says (:func:`refuse_bad_input`,
    :func:`refuse_bad_capacity`), so that an answers-only comparison expects the same errors.
    """

    def __init__(self, max_entries: int = 512 * 1024, *, bound: str = "global") -> None:
        refuse_bad_capacity(max_entries)
        if bound not in BOUNDS:
            raise ValueError(f"bound must be one of {BOUNDS}, got {bound!r}")
        self.max_entries = max_entries
        self.bound = bound
        self.beliefs: Beliefs = []

    def add(self, pool: Hashable, hashes: Iterable[Hashable]) -> None:
        refuse_bad_input(pool, hashes=hashes)
        per_pool = self.bound == "per-pool"
        self.beliefs = add(self.beliefs, pool, list(hashes), self.max_entries, per_pool)

    def contains(self, pool: Hashable, page_hash: Hashable) -> bool:
        refuse_bad_input(pool)
        found, self.beliefs = contains(self.beliefs, pool, page_hash)
        return found

    def contains_all(self, pool: Hashable, hashes: Iterable[Hashable]) -> bool:
        refuse_bad_input(pool, hashes=hashes)
        covered, self.beliefs = covers_all(self.beliefs, pool, list(hashes), frozenset())
        return covered

    def covers_all(
        self, pool: Hashable, hashes: Iterable[Hashable], extra_cover: Collection[Hashable] = frozenset()
    ) -> bool:
        refuse_bad_input(pool, hashes=hashes, extra_cover=extra_cover)
        covered, self.beliefs = covers_all(self.beliefs, pool, list(hashes), extra_cover)
        return covered

    def invalidate_beyond(self, pool: Hashable, hashes: Sequence[Hashable], keep_pages: int) -> None:
        refuse_bad_input(pool, keep_pages, hashes)
        self.beliefs = invalidate_beyond(self.beliefs, pool, list(hashes), keep_pages)

    def clear(self) -> None:
        self.beliefs = []

    def __len__(self) -> int:
        return len(self.beliefs)

    def snapshot(self) -> list[tuple[Hashable, Hashable]]:
        """Every belief as ``(pool, page_hash)``, least recently used first."""
        return list(self.beliefs)


class ContainsWithoutRefresh(StorageExistenceCacheSpec):
    """E3 in its known wrong form (O11: what the oracle replays a counterexample against to tell whose
    rule made the state an answer read): a ``contains`` hit answers True and leaves the belief where it
    is in the LRU order, so a later ``add`` evicts it first."""

    def contains(self, pool: Hashable, page_hash: Hashable) -> bool:
        refuse_bad_input(pool)
        return (pool, page_hash) in self.beliefs
