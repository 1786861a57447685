"""Lock-step machine for StorageExistenceCache (E1-E8, B1) against ``spec.models.existence_cache``.

A subclass names the implementation, ``target(max_entries)``, which is driven only
through its public methods plus ``snapshot()`` (every belief as ``(pool,
hash)``, least recently used first); ``check_invariants()`` is called when the
implementation has one.  Capacities 0-6, three pools and six hashes make
collisions, cross-pool evictions and batches longer than the bound common.
Chains arrive as lists, tuples and one-shot generators (E8).  The choice ``bound`` is the
bound the implementation declares (O3): global (E2, the default) or per pool
(P2's, behind E's API); with a bound per pool ``snapshot()`` is compared pool by
pool (``by_pool``).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from functools import partial
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from ..models.existence_cache import StorageExistenceCacheSpec, by_pool
from ._base import BadInput, BadSetting, LockstepMachine, assert_refused, try_bad_inputs

__all__ = [
    "BAD_INPUTS",
    "BAD_SETTINGS",
    "CAPACITIES",
    "HASHES",
    "POOLS",
    "StorageExistenceCacheMachine",
    "batches",
    "chains",
    "keeps",
    "shaped",
    "walks",
]

POOLS = ("p", "q", "r")
HASHES = ("h0", "h1", "h2", "h3", "h4", "h5")
CAPACITIES = (4, 0, 2, 6, 1, 3, 5)  # 0-6; 0 not first, where Hypothesis would favour it
SHAPES = ("list", "tuple", "generator")

pools = st.sampled_from(POOLS)
hashes = st.sampled_from(HASHES)
chains = st.lists(hashes, max_size=8)
batches = st.lists(hashes, min_size=1, max_size=8)  # what add takes: non-empty, so the cache fills up
# One-page chains half the time: a page covered only by extra_cover / in flight is then reached often.
walks = st.one_of(st.lists(hashes, min_size=1, max_size=1), chains)
shapes = st.sampled_from(SHAPES)
covers = st.frozensets(hashes, max_size=4)
keeps = st.sampled_from(
    (2, 1, 3, 0, 5, 9)
)  # keep_pages: past the end included; 0 not favoured, so beliefs survive


# B1: every bad input E's clauses name (the pool in the call is the step's): keep_pages of the wrong type,
# a bool, non-finite or negative (E6), hashes not iterable (E8) or, for invalidate_beyond, not a sequence,
# an extra_cover that is no container (E5), an unhashable pool (E1).  Which error each is, and the
# parameter its message names, the spec says (``refuse_bad_input``): the machine only lists what to try.
NAN, INF = float("nan"), float("inf")
BAD_INPUTS: tuple[BadInput, ...] = (
    BadInput("invalidate_beyond keep_pages=-1", "invalidate_beyond", (["h0"], -1)),
    BadInput("invalidate_beyond keep_pages=True", "invalidate_beyond", (["h0"], True)),
    BadInput("invalidate_beyond keep_pages=1.0", "invalidate_beyond", (["h0"], 1.0)),
    BadInput("invalidate_beyond keep_pages=nan", "invalidate_beyond", (["h0"], NAN)),
    BadInput("invalidate_beyond keep_pages=inf", "invalidate_beyond", (["h0"], INF)),
    BadInput("invalidate_beyond keep_pages='1'", "invalidate_beyond", (["h0"], "1")),
    BadInput("invalidate_beyond hashes={'h0'} (no sequence)", "invalidate_beyond", ({"h0"}, 0), at=1),
    BadInput("add hashes=5", "add", (5,)),
    BadInput("contains_all hashes=5", "contains_all", (5,)),
    BadInput("covers_all hashes=5", "covers_all", (5,)),
    BadInput("covers_all extra_cover=5", "covers_all", ([], 5)),  # an empty chain: checked up front
    BadInput("add pool=[] (unhashable)", "add", (["h0"],), at=0),
    BadInput("contains pool=[] (unhashable)", "contains", ("h0",), at=0),
)
# B1 of the constructor (E1): max_entries of the wrong type or negative, tried by the oracle through the
# target's own constructor form (the spec's ``refuse_bad_capacity`` says which error each is).
BAD_SETTINGS: tuple[BadSetting, ...] = tuple(
    BadSetting(f"max_entries={value!r}", {"max_entries": value}) for value in (-1, True, 1.5, "4", None, NAN)
)


def shaped(chain: list[str], shape: str) -> Iterable[str]:
    """``chain`` as a fresh list, a tuple or a one-shot generator."""
    if shape == "generator":
        return (h for h in chain)
    return tuple(chain) if shape == "tuple" else list(chain)


class StorageExistenceCacheMachine(LockstepMachine):
    """Checks ``target``'s caches against the spec, under the declared bound."""

    choices: ClassVar = {"bound": "global"}
    model: StorageExistenceCacheSpec

    def __init__(self) -> None:
        super().__init__()
        self.clause = "E2"  # the clause of the step just run: what a wrong snapshot after it breaks
        self.bad_inputs_tried = False  # B1: the bad inputs are tried once an example

    @initialize(max_entries=st.sampled_from(CAPACITIES))
    def build(self, max_entries: int) -> None:
        self.impl = self.target(max_entries)
        self.model = StorageExistenceCacheSpec(max_entries, bound=self.choices["bound"])
        self.ready = True

    @rule(pool=pools, chain=batches, shape=shapes)
    def add(self, pool: str, chain: list[str], shape: str) -> None:
        """E2, E8."""
        self.clause = "E1" if self.model.max_entries == 0 else "E2"
        self.impl.add(pool, shaped(chain, shape))
        self.model.add(pool, chain)

    @rule(pool=pools, chain=chains)
    def add_maybe_empty(self, pool: str, chain: list[str]) -> None:
        """E2: an empty batch changes nothing."""
        self.add(pool, chain, "list")

    @rule(pool=pools, page=hashes)
    def contains(self, pool: str, page: str) -> None:
        """E3."""
        self.clause = "E3"
        assert self.impl.contains(pool, page) == self.model.contains(pool, page), f"E3: contains{pool, page}"

    @rule(pool=pools, chain=chains, shape=shapes)
    def contains_all(self, pool: str, chain: list[str], shape: str) -> None:
        """E4, E8."""
        self.clause = "E8" if shape == "generator" else "E4"  # what an exception of the call breaks
        got = self.impl.contains_all(pool, shaped(chain, shape))
        self.clause = "E4"  # a wrong answer, or a wrong order after it, is E4's whatever the shape
        assert got == self.model.contains_all(pool, chain), f"E4: contains_all{pool, chain}"

    @rule(pool=pools, chain=walks, shape=shapes, cover=covers, as_set=st.booleans())
    def covers_all(
        self, pool: str, chain: list[str], shape: str, cover: frozenset[str], as_set: bool
    ) -> None:
        """E5, E8."""
        self.clause = "E8" if shape == "generator" else "E5"
        extra = set(cover) if as_set else cover
        got = self.impl.covers_all(pool, shaped(chain, shape), extra)
        self.clause = "E5"
        assert got == self.model.covers_all(pool, chain, cover), f"E5: covers_all{pool, chain, set(cover)}"

    @rule(pool=pools, chain=chains)
    def covers_all_without_extra_cover(self, pool: str, chain: list[str]) -> None:
        """E5: the default ``extra_cover`` is empty."""
        self.clause = "E5"
        got = self.impl.covers_all(pool, chain)
        assert got == self.model.covers_all(pool, chain), f"E5: covers_all{pool, chain}"

    @rule(pool=pools, chain=chains, as_tuple=st.booleans(), keep_pages=keeps)
    def invalidate_beyond(self, pool: str, chain: list[str], as_tuple: bool, keep_pages: int) -> None:
        """E6 (``keep_pages`` past the end included)."""
        self.clause = "E6"
        self.impl.invalidate_beyond(pool, tuple(chain) if as_tuple else list(chain), keep_pages)
        self.model.invalidate_beyond(pool, chain, keep_pages)

    @rule(pool=pools, chain=chains, keep_pages=st.integers(-3, -1))
    def invalidate_beyond_with_negative_keep_pages(
        self, pool: str, chain: list[str], keep_pages: int
    ) -> None:
        """E6, B1: a negative ``keep_pages`` is a ValueError and changes nothing."""
        self.clause = "B1"
        before = self.model.snapshot()
        refuse = [
            partial(c.invalidate_beyond, pool, list(chain), keep_pages) for c in (self.impl, self.model)
        ]
        assert_refused(
            refuse, f"B1: invalidate_beyond(keep_pages={keep_pages}) did not raise ValueError (E6)"
        )
        assert self.model.snapshot() == before, "B1: a refused invalidate_beyond changed the beliefs (E6)"

    @precondition(lambda self: not self.bad_inputs_tried)
    @rule(pool=pools)
    def bad_input(self, pool: str) -> None:
        """B1: every bad input of ``BAD_INPUTS`` raises the error the model raises for it, naming the
        parameter, and changes nothing (the comparison after the step sees any change).  The labels
        tried go to the report."""
        self.clause = "B1"
        self.bad_inputs_tried = True  # once an example: the other rules keep their share of the steps
        if self.skip_bad_inputs:
            return  # shrinking another clause's failure: the same step, without the calls (see _base)
        hashable = [b for b in BAD_INPUTS if "unhashable" not in b.label]
        try_bad_inputs(self._seen, self.impl, hashable, self._spec, pool)
        unhashable = [b for b in BAD_INPUTS if "unhashable" in b.label]
        try_bad_inputs(self._seen, self.impl, unhashable, self._spec, [])

    def _spec(self, method: str, *args: Any) -> object:
        """The same call on the model (B1: it refuses a bad input before any change)."""
        return getattr(self.model, method)(*args)

    @precondition(lambda self: self.model.max_entries > 0)
    @rule(pool=pools)
    def evict_one_then_ask_for_it(self, pool: str) -> None:
        """E2: add pages not believed, one at a time, until the bound evicts, then ask for the
        victim.  Without a ``snapshot()`` this is what shows the LRU order."""
        self._evict_one(pool, "E2")

    @precondition(lambda self: self.model.max_entries > 0)
    @rule(pool=pools, chain=chains, shape=shapes)
    def contains_all_then_evict(self, pool: str, chain: list[str], shape: str) -> None:
        """E4: a chain query, then the probe above: which pages ``contains_all`` touched (the
        believed prefix, in chain order, nothing past the first miss) decides the victim."""
        self.contains_all(pool, chain, shape)
        self.check_step()  # a snapshot, where the target has one, shows the order at once (E4)
        self._evict_one(pool, "E4")

    def _evict_one(self, pool: str, clause: str) -> None:
        self.clause = "E2"  # adds: what a wrong snapshot after them breaks
        for page in HASHES:
            if (pool, page) in self.model.beliefs:
                continue
            before = set(self.model.beliefs)
            self.impl.add(pool, [page])
            self.model.add(pool, [page])
            evicted = before - set(self.model.beliefs)
            if evicted:
                for victim_pool, victim in sorted(evicted, key=repr):
                    # contains_all of the one page: every target has it (contains is optional)
                    got = self.impl.contains_all(victim_pool, [victim])
                    want = self.model.contains_all(victim_pool, [victim])
                    assert got == want, (
                        f"{clause}: LRU order: {victim!r} of {victim_pool!r} after an eviction"
                    )
                return

    @precondition(lambda self: len(self.model) > 1)  # rarer than the other rules, so states grow
    @rule()
    def clear(self) -> None:
        """E7."""
        self.clause = "E7"
        self.impl.clear()
        self.model.clear()

    @rule()
    def length(self) -> None:
        """E7: a rule, not a check after every step: ``len()`` may trim or purge (O1)."""
        assert len(self.impl) == len(self.model), "E7: len()"

    def _compare(self) -> None:
        """Compares only what the implementation declares side-effect free (O1)."""
        if hasattr(self.impl, "snapshot"):
            got: Any = [tuple(belief) for belief in self.impl.snapshot()]
            want: Any = self.model.snapshot()
            if self.choices["bound"] == "per-pool":
                got, want = by_pool(got), by_pool(want)
            assert got == want, f"{self.clause}: LRU order: {got} != {want}"

    def abstract_state(self) -> Hashable:
        return (self.model.max_entries, tuple(self.model.beliefs))
