"""Lock-step machine for MetadataCache (M2-M6, M8, M9, B1) against ``spec.models.metadata_cache``.

A subclass names the implementation: ``target(ttl_seconds, max_entries=..., clock=...)``.
The choice ``eviction`` is the order its bound evicts in, as declared (M6
``"birth"``, or M6-lru ``"lru"``): the model follows the declaration (O3).
Time is a FakeClock on multiples of 1/8 s, so ``now - birth`` is exact and the
machine can land on exactly ``birth + ttl`` and on one tick past it.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from ..models.metadata_cache import MetadataCacheSpec
from ..world.clock import CountingClock
from ._base import BadInput, BadSetting, LockstepMachine, try_bad_inputs

__all__ = ["BAD_INPUTS", "BAD_SETTINGS", "KEYS", "TTLS", "MetadataCacheMachine"]

KEYS = ("a", "b", "c", "d")
TTLS = (-1, 0, 0.5, 1, 2.75)
BOUNDS = (None, 1, 2, 3)
TICK = 0.125
DELTAS = (0.0, TICK, 0.25, 0.5, 1.0, 2.0, 4.0)

keys = st.sampled_from(KEYS)
batches = st.lists(keys, max_size=5)  # repeats included: a batch may name a key twice (M9)

_BATCHES = ("add_many", "contains_many", "contains_prefix", "remove_many")
# B1: every bad input M's clauses name: a key that is not hashable (M3-M5; in a batch, as its first key:
# M9 lets the keys before a bad one take effect), a batch's keys that are not iterable (M9).  Which error
# each is, and the parameter its message names, the spec says (``refuse_bad_key``, ``refuse_bad_keys``).
BAD_INPUTS: tuple[BadInput, ...] = (
    *(BadInput(f"{method} key=[] (unhashable)", method, ([],)) for method in ("add", "contains", "remove")),
    *(BadInput(f"{method} keys=5", method, (5,)) for method in _BATCHES),
    *(BadInput(f"{method} keys=[[]] (an unhashable key)", method, ([[]],)) for method in _BATCHES),
)
# B1 of the constructor (M1), tried by the oracle through the target's own constructor form: a TTL of the
# wrong type, non-finite, negative other than -1 or too large for a float; a bound of the wrong type or
# below 1; a clock that is not callable; counters switched on by something that is not a bool.
_NAN, _INF = float("nan"), float("inf")
BAD_SETTINGS: tuple[BadSetting, ...] = (
    *(
        BadSetting(f"ttl_seconds={value!r}", {"ttl_seconds": value})
        for value in (True, "1", None, _NAN, _INF, -_INF, -2, -0.5)
    ),
    BadSetting("ttl_seconds=10**400 (no float holds it)", {"ttl_seconds": 10**400}),
    *(BadSetting(f"max_entries={value!r}", {"max_entries": value}) for value in (0, -1, True, 1.5, "2")),
    BadSetting("clock=5 (not callable)", {"clock": 5}),
    BadSetting("stats=1 (not a bool)", {"stats": 1}),
)


class MetadataCacheMachine(LockstepMachine):
    """Checks ``target``'s caches against the spec, evicting in the declared order."""

    choices: ClassVar = {"eviction": "birth"}
    model: MetadataCacheSpec

    def __init__(self) -> None:
        super().__init__()
        self.clock = CountingClock(1000.0)
        self.readded: set[str] = set()  # keys added again while stored (M3 is what their answer shows)
        self.reborn: set[str] = set()  # of those, the ones re-added once expired (a new lifetime)
        self.evicted = False  # the bound has evicted a live key (M6)
        self.counting = False  # the implementation's M8 counters have moved (see _compare)
        self.bad_inputs_tried = False  # B1: the bad inputs are tried once an example
        self.evictions_seen = 0  # the model's evictions at the last comparison (a step that evicted: M6)

    @initialize(ttl=st.sampled_from(TTLS), max_entries=st.sampled_from(BOUNDS))
    def build(self, ttl: float, max_entries: int | None) -> None:
        self.impl = self.target(ttl, max_entries=max_entries, clock=self.clock)
        self.model = MetadataCacheSpec(
            ttl, max_entries=max_entries, clock=self.clock, eviction=self.choices["eviction"]
        )
        self.ready = True

    @rule(key=keys)
    def add(self, key: str) -> None:
        """M3, M6: add never answers; its effect shows in later queries.  With M3 set aside after
        its failure (O2), a key the model still stores is not added again: the wrong lifetime such
        a re-add leaves would show as other clauses' divergences (an eviction order, a length)."""
        if key in self.model.births and (
            "M3" in self.set_aside or ("M2" in self.set_aside and "M2" in self._clause_of(key))
        ):
            return  # nor, with M2 set aside, a key at exactly its boundary (its re-add is M2's case)
        self._readding([key])
        evictions = self.model.evictions
        self.impl.add(key)
        self.model.add(key)
        self.evicted = self.evicted or self.model.evictions != evictions

    def _readding(self, keys: list[str]) -> None:
        """Note the keys the model stores as re-added: of a live key (no effect) or of a stored
        expired one (reborn: a new lifetime)."""
        stored, live = [k for k in keys if k in self.model.births], self.model.live()
        self.readded.update(stored)
        self.reborn.update(k for k in stored if k not in live)

    def _forget(self, keys: Iterable[str]) -> None:
        self.readded.difference_update(keys)
        self.reborn.difference_update(keys)

    @rule(key=keys)
    def contains(self, key: str) -> None:
        """M2, M3, M4, M6: the answer names the clause its history involves (see ``_clause_of``)."""
        clauses = self._clause_of(key)
        got, want = self.impl.contains(key), self.model.contains(key)
        if not got and want and key not in self.reborn:  # a re-add of a live key cannot shorten a life
            clauses = [c for c in clauses if c != "M3"]
        assert got == want or self.set_aside & set(clauses), f"{', '.join(clauses)}: contains({key!r})"

    @precondition(lambda self: self.model.ttl != -1)
    @rule(key=keys)
    def add_after_expiry_of(self, key: str) -> None:
        """M3: the clock lands one tick after a live key's expiry, and the key is added again: its
        entry is stored but expired, and the add must give it a new lifetime."""
        self.advance_to_expiry_of(key, TICK)
        self.add(key)

    @precondition(lambda self: self.model.max_entries is not None)
    @rule()
    def fill(self) -> None:
        """M6: add keys the model does not store until the bound is reached, so that the next add
        evicts (a full cache is otherwise many steps away)."""
        for key in KEYS:
            if len(self.model.live()) >= (self.model.max_entries or 0):
                break
            if key not in self.model.births:
                self.add(key)

    @precondition(lambda self: self.model.max_entries is not None)
    @rule()
    def hit_the_next_victim_then_evict(self) -> None:
        """M6, M6-lru: a hit on the key the declared order evicts next, an add of a key not stored,
        then a query of the hit key.  This is the sequence that tells birth order from recency
        order: a birth-ordered bound evicts the hit key, a recency-ordered one keeps it."""
        live = self.model.live()
        if not live:
            return
        victim = next(iter(live)) if self.model.eviction == "lru" else min(live, key=live.__getitem__)
        self.contains(victim)
        fresh = [k for k in KEYS if k not in self.model.births]
        if fresh:
            self.add(fresh[0])
        self.contains(victim)

    @precondition(lambda self: self.model.ttl not in (-1, 0))
    @rule(key=keys)
    def hit_midlife_then_ask_after_expiry(self, key: str) -> None:
        """M3, M6-lru: a hit halfway through a live key's life, then a query one tick after its
        expiry: a hit never lengthens a life, whatever order the bound evicts in."""
        birth = self.model.live().get(key)
        if birth is None:
            return
        self.clock.set(max(self.clock(), birth + self.model.ttl / 2))
        self.contains(key)
        self.clock.set(birth + self.model.ttl + TICK)
        self.contains(key)

    @rule()
    def contains_every_key(self) -> None:
        """M4: ask for every key, one call each: steps of the sequence, printed like any other (a
        probe the oracle made after every step instead would purge behind the target's back)."""
        for key in KEYS:
            self.contains(key)

    def _clause_of(self, key: Hashable) -> list[str]:
        """The clauses a wrong ``contains(key)`` breaks, the most specific first: a re-add of the key
        since it was first added (M3), the query on exactly the boundary birth + ttl (M2), an
        eviction by the bound (M6), liveness itself (M4).  A clause set aside after its failure (O2)
        excuses the answer: a boundary defect seen again through a re-add is not a new M3."""
        birth = self.model.births.get(key)
        found = ["M3"] if key in self.readded else []
        if birth is not None and self.model.ttl != -1 and self.clock() - birth == self.model.ttl:
            found.append("M2")
        return [*found, *(["M6"] if self.evicted else []), "M4"]

    @rule(chain=batches)
    def add_many(self, chain: list[str]) -> None:
        """M9: the adds of the batch in order, at one instant (one clock reading)."""
        if "M3" in self.set_aside:  # as in add: no re-adds once M3 has failed
            chain = [key for key in chain if key not in self.model.births]
        self._readding(chain)
        evictions = self.model.evictions
        self._one_instant("add_many", chain)
        self.model.add_many(chain)
        self.evicted = self.evicted or self.model.evictions != evictions

    @rule(chain=batches)
    def contains_many(self, chain: list[str]) -> None:
        """M9: the answers of ``contains`` of each key in order, at one instant."""
        got, want = self._one_instant("contains_many", chain), self.model.contains_many(chain)
        assert list(got) == want, f"M9: contains_many({chain!r})"

    @rule(chain=batches)
    def contains_prefix(self, chain: list[str]) -> None:
        """M9: how many leading keys are alive, at one instant."""
        got, want = self._one_instant("contains_prefix", chain), self.model.contains_prefix(chain)
        assert got == want, f"M9: contains_prefix({chain!r})"

    @rule(chain=batches)
    def remove_many(self, chain: list[str]) -> None:
        """M9 (M5's remove, batched)."""
        self.impl.remove_many(chain)
        self.model.remove_many(chain)
        self._forget(chain)

    def _one_instant(self, method: str, chain: list[str]) -> Any:
        """Call a batch on the implementation: one instant, so at most one clock reading (M9)."""
        before = self.clock.reads
        answer = getattr(self.impl, method)(chain)
        reads = self.clock.reads - before
        assert reads <= 1, f"M9: {method}({chain!r}) read the clock {reads} times, not at one instant"
        return answer

    @rule(key=keys)
    def remove(self, key: str) -> None:
        """M5."""
        self.impl.remove(key)
        self.model.remove(key)
        self._forget([key])

    @rule()
    def clear(self) -> None:
        """M5."""
        self.impl.clear()
        self.model.clear()
        self._forget(KEYS)

    @precondition(lambda self: not self.bad_inputs_tried)
    @rule()
    def bad_input(self) -> None:
        """B1: every bad input of ``BAD_INPUTS`` raises the error the model raises for it, naming the
        parameter, and changes nothing (the snapshot and the counters after the step, and every later
        answer, would show a change).  The labels tried go to the report."""
        self.bad_inputs_tried = True  # once an example: the other rules keep their share of the steps
        if self.skip_bad_inputs:
            return  # shrinking another clause's failure: the same step, without the calls (see _base)
        try_bad_inputs(self._seen, self.impl, BAD_INPUTS, lambda method, *a: getattr(self.model, method)(*a))

    @rule(delta=st.sampled_from(DELTAS))
    def advance(self, delta: float) -> None:
        self.clock.advance(delta)

    @precondition(lambda self: self.model.ttl != -1)
    @rule(key=keys, past=st.sampled_from((0.0, TICK)))
    def advance_to_expiry_of(self, key: str, past: float) -> None:
        """M2: land on exactly birth + ttl, or one tick after it."""
        birth = self.model.live().get(key)
        if birth is not None:
            self.clock.set(birth + self.model.ttl + past)

    @precondition(lambda self: self.model.ttl != -1)
    @rule(key=keys, past=st.sampled_from((0.0, TICK)))
    def contains_at_expiry_of(self, key: str, past: float) -> None:
        """M2: the clock lands on exactly birth + ttl of a live key, or one tick after, and the key is
        asked for at once (a clock move, then one call: an observation would be a call too)."""
        self.advance_to_expiry_of(key, past)
        self.contains(key)

    @rule()
    def length(self) -> None:
        """M5: len() counts the live keys.  A rule rather than a check after every step: len()
        may purge, and purging after every step would hide mistakes that keep expired entries
        (a stale birth kept on re-add, a bound applied before the purge)."""
        # A key added again since its first add (M3: the lifetime a re-add leaves), or one at exactly
        # birth + ttl (M2), is named first: len() is where such a lifetime shows.
        readded = any(k in self.readded for k in self.model.births)
        on_boundary = [k for k in self.model.live() if "M2" in self._clause_of(k)]
        clauses = [*(["M3"] if readded else []), *(["M2"] if on_boundary else []), "M5"]
        assert len(self.impl) == len(self.model) or self.set_aside & set(clauses[:-1]), (
            f"{', '.join(clauses)}: len()"
        )

    def _compare(self) -> None:
        """Compares only what the implementation declares side-effect free (after ``check_invariants``):
        ``snapshot`` and ``stats``, where it has them.  Never ``contains`` or ``len``: a cache may
        purge inside them, and a purge between steps would hide the mistakes that keep expired
        entries (O1)."""
        snapshot = getattr(self.impl, "snapshot", None)
        if snapshot is not None:
            # The refinement mapping, where the implementation exposes it: the live keys with
            # their births, in eviction order (birth order, or least recently used first under
            # M6-lru).  Catches a wrong birth at once, not only when the clock later reaches it.
            want_live = tuple(self.model.live().items())
            got_live = tuple(snapshot())
            # Other keys than the model's right after the bound evicted: the victim was the wrong one (M6).
            evicted = self.model.evictions != self.evictions_seen
            victim = evicted and {k for k, _ in got_live} != set(dict(want_live))
            clause = "M6" if victim else "M3"
            assert got_live == want_live, f"{clause}: live births (lifetimes and birth order)"
        self.evictions_seen = self.model.evictions if self.ready else 0
        stats = getattr(self.impl, "stats", None)
        if stats is not None:
            got = stats()
            counters = (got.hits, got.misses, got.evictions)
            # M8: the counters are "all zero unless the cache was built with stats=True", so counters
            # that never moved are a cache built without them; once one has moved, all must agree.
            self.counting = self.counting or any(counters)
            want = (self.model.hits, self.model.misses, self.model.evictions)
            assert not self.counting or counters == want, "M8: counters"

    def abstract_state(self) -> Hashable:
        now = self.clock()
        return (
            self.model.ttl,
            self.model.max_entries,
            tuple((k, now - b) for k, b in self.model.live().items()),
        )
