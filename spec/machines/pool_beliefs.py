"""Lock-step machine for PooledExistenceCache and its pools (P1-P5, B1) against ``spec.models.pool_beliefs``.

A subclass names the implementation, ``target(max_entries)``, a registry; the
machine reaches the pools only through ``registry.pool(name)`` and their
public methods, and compares each pool's ``snapshot()`` (beliefs least
recently used first, in-flight reference counts).  ``check_invariants()`` is
called on the registry when it has one.  After each step only the pools the
steps have asked for are compared, through ``snapshot()``: asking for the
others would create them (O1).  P1's "one pool per name" is checked at every
``pool(name)`` a step makes.
"""

from __future__ import annotations

from collections.abc import Hashable
from functools import partial
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from ..models.pool_beliefs import PooledExistenceCacheSpec
from ._base import BadInput, LockstepMachine, assert_refused, try_bad_inputs
from .existence_cache import (
    BAD_INPUTS,
    CAPACITIES,
    batches,
    chains,
    hashes,
    keeps,
    shaped,
    shapes,
    walks,
)
from .existence_cache import (
    BAD_SETTINGS as EXISTENCE_BAD_SETTINGS,
)

__all__ = ["BAD_SETTINGS", "NAMES", "POOL_BAD_INPUTS", "UNHASHABLE_NAME", "PoolBeliefsMachine"]

# B1: E's bad inputs of the methods a pool shares (without the pool argument), the hashes of a pool's own
# methods not iterable (P3, P4 as E8), and a pool name that is not hashable (P1); the spec says which
# error each is.  (A pool's methods take no pool: the bad argument's index is one less.)
_SHARED = ("add", "contains_all", "invalidate_beyond")
POOL_BAD_INPUTS: tuple[BadInput, ...] = (
    *(
        b._replace(at=b.at - 1 if b.at > 0 else b.at)
        for b in BAD_INPUTS
        if b.method in _SHARED and "pool=" not in b.label
    ),
    BadInput("covered hashes=5", "covered", (5,)),
    BadInput("track_inflight hashes=5", "track_inflight", (5,)),
    BadInput("untrack_inflight hashes=5", "untrack_inflight", (5,)),
)
UNHASHABLE_NAME: tuple[BadInput, ...] = (BadInput("pool name=[] (unhashable)", "pool", ([],)),)
BAD_SETTINGS = EXISTENCE_BAD_SETTINGS  # P1: max_entries as E1's

NAMES = ("kv", "mamba")

names = st.sampled_from(NAMES)


class PoolBeliefsMachine(LockstepMachine):
    """Checks ``target``'s registries against the spec."""

    model: PooledExistenceCacheSpec

    def __init__(self) -> None:
        super().__init__()
        self.pools: dict[str, Any] = {}  # the pools the steps have asked for, by name
        self.clause = "P2"  # the clause of the step just run: what a wrong snapshot after it breaks
        self.acted_on: str | None = None  # the pool the step asked for (None: the whole registry)
        self.bad_inputs_tried = False  # B1: the bad inputs are tried once an example

    @initialize(max_entries=st.sampled_from(CAPACITIES))
    def build(self, max_entries: int) -> None:
        self.impl = self.target(max_entries)
        self.model = PooledExistenceCacheSpec(max_entries)
        self.ready = True

    @rule(name=names, chain=batches, shape=shapes)
    def add(self, name: str, chain: list[str], shape: str) -> None:
        """P2 (as E2), E8."""
        self.clause = "P2"
        self._pool(name).add(shaped(chain, shape))
        self.model.pool(name).add(chain)

    @rule(name=names, page=hashes)
    def contains(self, name: str, page: str) -> None:
        """P2 (as E3)."""
        self.clause = "P2"
        got = self._pool(name).contains(page)
        assert got == self.model.pool(name).contains(page), f"P2: {name}.contains({page!r})"

    @rule(name=names, chain=chains, shape=shapes)
    def contains_all(self, name: str, chain: list[str], shape: str) -> None:
        """P2 (as E4): in-flight pages do not count here."""
        self.clause = "P2"
        got = self._pool(name).contains_all(shaped(chain, shape))
        assert got == self.model.pool(name).contains_all(chain), f"P2: {name}.contains_all({chain})"

    @rule(name=names, chain=walks, shape=shapes)
    def covered(self, name: str, chain: list[str], shape: str) -> None:
        """P4."""
        self.clause = "P4"
        got = self._pool(name).covered(shaped(chain, shape))
        assert got == self.model.pool(name).covered(chain), f"P4: {name}.covered({chain})"

    @rule(name=names, chain=batches, shape=shapes)
    def track_inflight(self, name: str, chain: list[str], shape: str) -> None:
        """P3: one reference per occurrence."""
        self.clause = "P3"
        self._pool(name).track_inflight(shaped(chain, shape))
        self.model.pool(name).track_inflight(chain)

    @rule(name=names, chain=chains, shape=shapes)
    def untrack_inflight(self, name: str, chain: list[str], shape: str) -> None:
        """P3: untracking more often than tracked is a no-op past zero."""
        self.clause = "P3"
        self._pool(name).untrack_inflight(shaped(chain, shape))
        self.model.pool(name).untrack_inflight(chain)

    @rule(name=names, page=hashes, shape=shapes)
    def two_writes_of_a_page_then_one_ack(self, name: str, page: str, shape: str) -> None:
        """P3: a chain in flight names ``page`` twice, one occurrence is acknowledged, and
        ``page`` must still be covered: one reference per occurrence."""
        self.track_inflight(name, [page, page], shape)
        self.check_step()  # a snapshot, where the target has one, after each call (O1 allows it)
        self.untrack_inflight(name, [page], shape)
        self.check_step()
        self.clause = "P4"  # the step run last: what a wrong snapshot after the rule breaks
        got = self._pool(name).covered(shaped([page], shape))
        assert got == self.model.pool(name).covered([page]), f"P3: {name}.covered([{page!r}])"

    @rule(name=names, page=hashes)
    def clear_pool_with_a_write_in_flight(self, name: str, page: str) -> None:
        """P5: a pool's clear drops its in-flight references too: the page is no longer covered."""
        self.track_inflight(name, [page], "list")
        self.check_step()
        self.clause = "P5"
        self._clear_pool(name)
        self._covered_after_clear(name, page, "P5")

    @rule(name=names, page=hashes)
    def clear_registry_with_a_write_in_flight(self, name: str, page: str) -> None:
        """P1, P5: the registry's clear reaches every pool's in-flight references."""
        self.track_inflight(name, [page], "list")
        self.check_step()
        self.clause = "P1"
        self.impl.clear()
        self.model.clear()
        self._covered_after_clear(name, page, "P1")

    def _clear_pool(self, name: str) -> None:
        self._pool(name).clear()
        self.model.pool(name).clear()

    def _covered_after_clear(self, name: str, page: str, clause: str) -> None:
        self.check_step()
        self.clause = "P4"
        got = self._pool(name).covered([page])
        assert got == self.model.pool(name).covered([page]), (
            f"{clause}: {name}.covered([{page!r}]) after clear"
        )

    @rule(name=names, chain=chains, as_tuple=st.booleans(), keep_pages=keeps)
    def invalidate_beyond(self, name: str, chain: list[str], as_tuple: bool, keep_pages: int) -> None:
        """P2 (as E6), ``keep_pages`` past the end included."""
        self.clause = "P2"
        self._pool(name).invalidate_beyond(tuple(chain) if as_tuple else list(chain), keep_pages)
        self.model.pool(name).invalidate_beyond(chain, keep_pages)

    @rule(name=names, chain=chains, keep_pages=st.integers(-3, -1))
    def invalidate_beyond_with_negative_keep_pages(
        self, name: str, chain: list[str], keep_pages: int
    ) -> None:
        """P2, E6, B1: a negative ``keep_pages`` is a ValueError and changes nothing."""
        self.clause = "B1"
        before = self.model.pool(name).snapshot()
        refuse = [
            partial(p.invalidate_beyond, list(chain), keep_pages)
            for p in (self._pool(name), self.model.pool(name))
        ]
        assert_refused(
            refuse, f"B1: invalidate_beyond(keep_pages={keep_pages}) did not raise ValueError (P2, E6)"
        )
        assert self.model.pool(name).snapshot() == before, "B1: a refused invalidate_beyond changed the pool"

    @precondition(lambda self: not self.bad_inputs_tried)
    @rule(name=names)
    def bad_input(self, name: str) -> None:
        """B1: every bad input of ``POOL_BAD_INPUTS`` raises the error the model's pool raises for it on a
        pool, and an unhashable name on the registry, naming the parameter; nothing changes (the
        comparison after the step sees any change)."""
        self.clause = "B1"
        self.bad_inputs_tried = True  # once an example: the other rules keep their share of the steps
        if self.skip_bad_inputs:
            return  # shrinking another clause's failure: the same step, without the calls (see _base)
        pool = self.model.pool(name)
        try_bad_inputs(self._seen, self._pool(name), POOL_BAD_INPUTS, lambda m, *a: getattr(pool, m)(*a))
        try_bad_inputs(self._seen, self.impl, UNHASHABLE_NAME, lambda m, *a: getattr(self.model, m)(*a))

    @precondition(lambda self: sum(len(self.model.pool(n)) for n in NAMES) > 1)
    @rule(name=names)
    def clear_pool(self, name: str) -> None:
        """P5: beliefs and in-flight references."""
        self.clause = "P5"
        self._clear_pool(name)

    @rule(name=names)
    def clear_pool_inflight(self, name: str) -> None:
        """P5: only the in-flight references."""
        self.clause = "P5"
        self._pool(name).clear_inflight()
        self.model.pool(name).clear_inflight()

    @precondition(lambda self: sum(len(self.model.pool(n)) for n in NAMES) > 1)  # rarer, so states grow
    @rule()
    def clear_registry(self) -> None:
        """P1: every pool."""
        self.clause = "P5"
        self.impl.clear()
        self.model.clear()

    @rule()
    def clear_registry_inflight(self) -> None:
        """P1: every pool."""
        self.clause = "P5"
        self.impl.clear_inflight()
        self.model.clear_inflight()

    def _pool(self, name: str) -> Any:
        """``registry.pool(name)``, the same object every time it is asked (P1)."""
        pool = self.impl.pool(name)
        self.acted_on = name
        first = self.pools.setdefault(name, pool)
        assert pool is first, f"P1: pool({name!r}) is not one object"
        return pool

    @rule(name=names)
    def length(self, name: str) -> None:
        """P2: a rule, not a check after every step: ``len()`` may trim (O1)."""
        assert len(self._pool(name)) == len(self.model.pool(name)), f"P2: {name}: len()"

    def _compare(self) -> None:
        """Compares only what the implementation declares side-effect free, on the pools the steps
        have asked for: asking for every pool after each step would create them (O1)."""
        acted_on, self.acted_on = self.acted_on, None
        for name, pool in self.pools.items():
            if not hasattr(pool, "snapshot"):
                continue
            beliefs, inflight = pool.snapshot()
            want = self.model.pool(name).snapshot()
            # A pool the step did not act on has changed: pools are independent (P1).
            clause = self.clause if acted_on in (None, name) else "P1"
            assert (list(beliefs), dict(inflight)) == want, f"{clause}: {name}: {beliefs, inflight} != {want}"

    def abstract_state(self) -> Hashable:
        return (
            self.model.max_entries,
            tuple(
                (tuple(beliefs), tuple(sorted(inflight.items())))
                for beliefs, inflight in (self.model.pool(name).snapshot() for name in NAMES)
            ),
        )
