"""Lock-step machine for MetadataCache (M2-M6, M8) against ``spec.metadata_cache``.

The factory is called as ``factory(ttl_seconds, max_entries=..., clock=...)``.
Time is a FakeClock on multiples of 1/8 s, so ``now - birth`` is exact and the
machine can land on exactly ``birth + ttl`` and on one tick past it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from spec.fakes import FakeClock
from spec.machines._base import LockstepMachine
from spec.metadata_cache import MetadataCacheSpec

__all__ = ["KEYS", "TTLS", "metadata_cache_machine"]

KEYS = ("a", "b", "c", "d")
TTLS = (-1, 0, 0.5, 1, 2.75)
BOUNDS = (None, 1, 2, 3)
TICK = 0.125
DELTAS = (0.0, TICK, 0.25, 0.5, 1.0, 2.0, 4.0)

keys = st.sampled_from(KEYS)


def metadata_cache_machine(factory: Callable[..., Any]) -> type[LockstepMachine]:
    """A machine class that checks ``factory``'s caches against the spec."""

    class MetadataCacheMachine(LockstepMachine):
        impl: Any
        model: MetadataCacheSpec

        def __init__(self) -> None:
            super().__init__()
            self.ready = False
            self.clock = FakeClock(1000.0)

        @initialize(ttl=st.sampled_from(TTLS), max_entries=st.sampled_from(BOUNDS))
        def build(self, ttl: float, max_entries: int | None) -> None:
            self.impl = factory(ttl, max_entries=max_entries, clock=self.clock)
            self.model = MetadataCacheSpec(ttl, max_entries=max_entries, clock=self.clock)
            self.ready = True

        @rule(key=keys)
        def add(self, key: str) -> None:
            """M3, M6: add never answers; its effect shows in later queries."""
            self.impl.add(key)
            self.model.add(key)

        @rule(key=keys)
        def contains(self, key: str) -> None:
            """M2, M4."""
            assert self.impl.contains(key) == self.model.contains(key), f"M4: contains({key!r})"

        @rule(key=keys)
        def remove(self, key: str) -> None:
            """M5."""
            self.impl.remove(key)
            self.model.remove(key)

        @rule()
        def clear(self) -> None:
            """M5."""
            self.impl.clear()
            self.model.clear()

        @rule(delta=st.sampled_from(DELTAS))
        def advance(self, delta: float) -> None:
            self.clock.advance(delta)

        @precondition(lambda self: self.ready and self.model.ttl != -1)
        @rule(key=keys, past=st.sampled_from((0.0, TICK)))
        def advance_to_expiry_of(self, key: str, past: float) -> None:
            """M2: land on exactly birth + ttl, or one tick after it."""
            birth = self.model.live().get(key)
            if birth is not None:
                self.clock.set(birth + self.model.ttl + past)

        @precondition(lambda self: self.ready)
        @rule()
        def length(self) -> None:
            """M5: len() counts the live keys.  A rule rather than a check after every step: len()
            may purge, and purging after every step would hide mistakes that keep expired entries
            (a stale birth kept on re-add, a bound applied before the purge)."""
            assert len(self.impl) == len(self.model), "M5: len()"

        def check_step(self) -> None:
            if not self.ready:
                return
            if hasattr(self.impl, "check_invariants"):
                self.impl.check_invariants()
            for key in KEYS:
                assert self.impl.contains(key) == self.model.contains(key), f"M4: contains({key!r})"
            snapshot = getattr(self.impl, "snapshot", None)
            if snapshot is not None:
                # The refinement mapping, where the implementation exposes it: the live keys with
                # their births, in birth order.  Catches a wrong birth at once, not only when the
                # clock later reaches it.
                want_live = tuple(self.model.live().items())
                assert tuple(snapshot()) == want_live, "M3: live births (lifetimes and birth order)"
            stats = getattr(self.impl, "stats", None)
            if stats is not None and getattr(self.impl, "stats_enabled", True):
                got = stats()
                want = (self.model.hits, self.model.misses, self.model.evictions)
                assert (got.hits, got.misses, got.evictions) == want, "M8: counters"

        def abstract_state(self) -> Hashable:
            if not self.ready:
                return None
            now = self.clock()
            return (
                self.model.ttl,
                self.model.max_entries,
                tuple((k, now - b) for k, b in self.model.live().items()),
            )

    return MetadataCacheMachine
