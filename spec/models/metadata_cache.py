"""Executable model of the hard-TTL MetadataCache (docs/SEMANTICS.md M1-M9).

The whole state is ``births``: a mapping from key to the time its current
lifetime began, in the order those lifetimes began.  Everything else is a few
lines of rules over it.  The pure functions carry PEP 316 contracts that
``crosshair check --analysis_kind=PEP316`` proves or refutes; the class wraps
them behind the production constructor so the lock-step machine can drive
model and implementation alike.

Where docs/SEMANTICS.md leaves a choice open, the model fixes it:

* M6 "oldest birth": two lifetimes born at the same instant are ordered by the
  order their ``add`` calls happened (the earlier add is evicted first).
* M6-lru, the declared variant (``eviction="lru"``): ``births`` is kept in
  eviction order instead, least recently used first: a ``contains`` hit moves
  the key to the newest end, and its birth stays (a hit never lengthens a life).
* M9 batches are the single operations folded over the keys at one ``now``
  (``contains_prefix`` stops after the first miss): nothing of their own.
* M8 counters: ``hits`` and ``misses`` count ``contains`` answers; ``evictions``
  counts live entries dropped by the bound.  ``expirations`` depends on when
  an implementation purges (M4 makes that unobservable), so it is not modelled.
"""

from __future__ import annotations

import math  # noqa: F401 -- used by the PEP 316 contracts in the docstrings
import time
from collections.abc import Callable, Hashable, Iterable

from .refusals import refuse_bad_metadata_key as refuse_bad_key
from .refusals import refuse_bad_metadata_keys as refuse_bad_keys
from .refusals import refuse_bad_metadata_settings as refuse_bad_settings

__all__ = [
    "EVICTIONS",
    "MetadataCacheSpec",
    "StaleBirthKeptOnReAdd",
    "add",
    "add_many",
    "contains",
    "contains_many",
    "contains_prefix",
    "is_live",
    "live_keys",
    "refuse_bad_key",
    "refuse_bad_keys",
    "refuse_bad_settings",
    "remove",
    "remove_many",
    "used",
]

EVICTIONS = ("birth", "lru")  # M6 and its declared variant M6-lru; the first is the default

Births = dict[Hashable, float]


def is_live(birth: float, now: float, ttl: float) -> bool:
    """M2: alive at ``now`` when the TTL is -1 or ``now - birth <= ttl`` (inclusive).

    pre: ttl == -1 or 0 <= ttl < math.inf
    pre: math.isfinite(now)
    post: (ttl != -1) or __return__
    post: (now != birth) or __return__
    post: (now - birth <= ttl) or (ttl == -1) or not __return__
    """
    return ttl == -1 or now - birth <= ttl


def live_keys(births: Births, now: float, ttl: float) -> list[Hashable]:
    """M5: the keys alive at ``now``, in birth order.

    pre: ttl == -1 or 0 <= ttl < math.inf
    pre: math.isfinite(now)
    post: all(k in births for k in __return__)
    post: len(__return__) <= len(births)
    """
    return [k for k, b in births.items() if is_live(b, now, ttl)]


def contains(births: Births, key: Hashable, now: float, ttl: float) -> bool:
    """M4: True exactly when ``key`` is alive.

    pre: ttl == -1 or 0 <= ttl < math.inf
    pre: math.isfinite(now)
    post: (key in births) or not __return__
    post: __return__ == (key in live_keys(births, now, ttl))
    """
    birth = births.get(key)
    return birth is not None and is_live(birth, now, ttl)


def add(
    births: Births, key: Hashable, now: float, ttl: float, max_entries: int | None, lru: bool = False
) -> tuple[Births, int]:
    """M3 + M6: the births after ``add(key)`` at ``now``, and how many live keys the bound evicted.
    With ``lru`` (M6-lru) the victim is the first in ``births``' order, the least recently used;
    otherwise the oldest birth.

    pre: ttl == -1 or 0 <= ttl < math.inf
    pre: math.isfinite(now)
    pre: max_entries is None or max_entries >= 1
    pre: max_entries is None or len(births) <= max_entries
    pre: all(b <= now for b in births.values())
    post: contains(__return__[0], key, now, ttl)
    post: not contains(births, key, now, ttl) or __return__ == (births, 0)
    post: contains(births, key, now, ttl) or __return__[0][key] == now
    post: max_entries is None or len(__return__[0]) <= max_entries
    post: all(births[k] == b for k, b in __return__[0].items() if k != key)
    post: __return__[1] <= 1
    """
    if contains(births, key, now, ttl):
        return births, 0  # M3: hard TTL, re-adding never extends a lifetime
    after = {k: b for k, b in births.items() if k != key}
    evicted = 0
    if max_entries is not None and len(after) >= max_entries:
        after = {k: b for k, b in after.items() if is_live(b, now, ttl)}
        if len(after) >= max_entries:
            victim = next(iter(after)) if lru else min(after, key=after.__getitem__)  # first of the oldest
            del after[victim]
            evicted = 1
    after[key] = now  # a new lifetime, born now, never the stale birth (M3)
    return after, evicted


def used(births: Births, key: Hashable) -> Births:
    """M6-lru: a ``contains`` hit makes ``key`` the most recently used; every birth stays.

    pre: key in births
    pre: all(math.isfinite(b) for b in births.values())
    post: list(__return__)[-1] == key
    post: __return__ == births
    """
    after = {k: b for k, b in births.items() if k != key}
    after[key] = births[key]
    return after


def remove(births: Births, key: Hashable) -> Births:
    """M5: afterwards ``key`` is not alive.

    post: key not in __return__
    post: len(__return__) <= len(births)
    """
    return {k: b for k, b in births.items() if k != key}


def add_many(
    births: Births, keys: list[Hashable], now: float, ttl: float, max_entries: int | None, lru: bool = False
) -> tuple[Births, int]:
    """M9: ``add`` of each key in order at the one instant ``now``, and the live keys the bound evicted.

    pre: ttl == -1 or 0 <= ttl < math.inf
    pre: math.isfinite(now)
    pre: max_entries is None or max_entries >= 1
    pre: max_entries is None or len(births) <= max_entries
    pre: all(b <= now for b in births.values())
    post: not keys or contains(__return__[0], keys[-1], now, ttl)
    post: max_entries is None or len(__return__[0]) <= max_entries
    post: max_entries is not None or all(contains(__return__[0], k, now, ttl) for k in keys)
    post: all(births[k] == b for k, b in __return__[0].items() if k not in keys)
    post: __return__[1] <= len(keys)
    """
    evicted = 0
    for key in keys:
        births, dropped = add(births, key, now, ttl, max_entries, lru)
        evicted += dropped
    return births, evicted


def contains_many(
    births: Births, keys: list[Hashable], now: float, ttl: float, lru: bool = False
) -> tuple[list[bool], Births]:
    """M9: ``contains`` of each key in order at the one instant ``now``: the answers, and the births
    after (under ``lru`` each hit made most recent in turn; the lifetimes never change).

    pre: ttl == -1 or 0 <= ttl < math.inf
    pre: math.isfinite(now)
    pre: all(math.isfinite(b) for b in births.values())
    post: __return__[0] == [contains(births, k, now, ttl) for k in keys]
    post: __return__[1] == births
    post: lru or list(__return__[1]) == list(births)
    """
    answers = []
    for key in keys:
        found = contains(births, key, now, ttl)
        if found and lru:
            births = used(births, key)
        answers.append(found)
    return answers, births


def contains_prefix(
    births: Births, keys: list[Hashable], now: float, ttl: float, lru: bool = False
) -> tuple[int, Births]:
    """M9: the number of leading keys alive at ``now``, asked in order up to the first that is not
    (``contains_many`` of that prefix and that one key), and the births after.

    pre: ttl == -1 or 0 <= ttl < math.inf
    pre: math.isfinite(now)
    pre: all(math.isfinite(b) for b in births.values())
    post: 0 <= __return__[0] <= len(keys)
    post: all(contains(births, k, now, ttl) for k in keys[: __return__[0]])
    post: __return__[0] == len(keys) or not contains(births, keys[__return__[0]], now, ttl)
    post: __return__[1] == births
    """
    count = 0
    for key in keys:
        if not contains(births, key, now, ttl):
            break
        if lru:
            births = used(births, key)
        count += 1
    return count, births


def remove_many(births: Births, keys: list[Hashable]) -> Births:
    """M9: ``remove`` of each key: afterwards none of them is alive, and every other birth stays.

    pre: all(math.isfinite(b) for b in births.values())
    post: all(k not in __return__ for k in keys)
    post: all(__return__[k] == births[k] for k in __return__)
    post: all(k in __return__ for k in births if k not in keys)
    """
    for key in keys:
        births = remove(births, key)
    return births


class MetadataCacheSpec:
    """The model behind the production constructor: ``MetadataCacheSpec(ttl, *, max_entries, clock)``.

    ``eviction`` is the declared order the bound evicts in: ``"birth"`` (M6, the
    production class's) or ``"lru"`` (M6-lru).  The bad inputs M names are refused
    before any change (B1: :func:`refuse_bad_settings`, :func:`refuse_bad_key`,
    :func:`refuse_bad_keys`), so that an answers-only comparison expects the same
    errors.  No thread safety: it is driven by the lock-step machine, one call at
    a time.
    """

    def __init__(
        self,
        ttl_seconds: float,
        *,
        max_entries: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        eviction: str = "birth",
    ) -> None:
        ttl = refuse_bad_settings(ttl_seconds, max_entries, clock)
        if eviction not in EVICTIONS:
            raise ValueError(f"eviction must be one of {EVICTIONS}, got {eviction!r}")
        self.ttl = ttl
        self.max_entries = max_entries
        self.clock = clock
        self.eviction = eviction
        self.births: Births = {}
        self.hits = self.misses = self.evictions = 0

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)
        lru = self.eviction == "lru"
        self.births, evicted = add(self.births, key, self.clock(), self.ttl, self.max_entries, lru)
        self.evictions += evicted

    def contains(self, key: Hashable) -> bool:
        refuse_bad_key(key)
        found = contains(self.births, key, self.clock(), self.ttl)
        if found:
            self.hits += 1
            if self.eviction == "lru":
                self.births = used(self.births, key)
        else:
            self.misses += 1
        return found

    def remove(self, key: Hashable) -> None:
        refuse_bad_key(key)
        self.births = remove(self.births, key)

    def add_many(self, keys: Iterable[Hashable]) -> None:
        bound, lru, batch = self.max_entries, self.eviction == "lru", refuse_bad_keys(keys)
        self.births, evicted = add_many(self.births, batch, self.clock(), self.ttl, bound, lru)
        self.evictions += evicted

    def contains_many(self, keys: Iterable[Hashable]) -> list[bool]:
        lru, batch = self.eviction == "lru", refuse_bad_keys(keys)
        found, self.births = contains_many(self.births, batch, self.clock(), self.ttl, lru)
        self.hits += sum(found)
        self.misses += len(found) - sum(found)
        return found

    def contains_prefix(self, keys: Iterable[Hashable]) -> int:
        """(Takes the keys as a list: unlike production, it does not stop consuming an iterator early.)"""
        asked, lru = refuse_bad_keys(keys), self.eviction == "lru"
        count, self.births = contains_prefix(self.births, asked, self.clock(), self.ttl, lru)
        self.hits += count
        self.misses += count < len(asked)
        return count

    def remove_many(self, keys: Iterable[Hashable]) -> None:
        self.births = remove_many(self.births, refuse_bad_keys(keys))

    def clear(self) -> None:
        self.births = {}

    def __len__(self) -> int:
        return len(live_keys(self.births, self.clock(), self.ttl))

    def live(self) -> dict[Hashable, float]:
        """The live keys with their births, in eviction order (the abstract state of M)."""
        now = self.clock()
        return {k: b for k, b in self.births.items() if is_live(b, now, self.ttl)}


class StaleBirthKeptOnReAdd(MetadataCacheSpec):
    """M3 in its known wrong form (O11: what the oracle replays a counterexample against to tell whose
    rule made the state an answer read): a re-add of a key that is stored but expired keeps its old
    birth, so the key stays expired ("``if key not in cache: cache[key] = now``").  Nothing else
    differs: an expired entry stays stored until removed, cleared or dropped by the bound (M6)."""

    def add(self, key: Hashable) -> None:
        refuse_bad_key(key)
        if key not in self.births:  # the spec's: ``if not contains(...)``
            super().add(key)

    def add_many(self, keys: Iterable[Hashable]) -> None:
        batch, now, lru = refuse_bad_keys(keys), self.clock(), self.eviction == "lru"
        for key in batch:  # M9: the adds in order at one instant, each as ``add`` above
            if key not in self.births:
                self.births, evicted = add(self.births, key, now, self.ttl, self.max_entries, lru)
                self.evictions += evicted
