"""Timed linearizability of a metadata cache on a real clock (O7): instants kept as a zone, not guessed.

A trace recorded on a real clock says when each call was invoked and when it
returned, and sometimes the instant it read (``now``).  O7 asks for an order
of the calls and an instant for each, inside its interval and not decreasing
along the order, that makes the spec give every answer.  Guessing instants
(the earliest, the latest, where a life ends) misses orders: a key added in
[0, 10] that one call sees alive in [5, 20] and another sees expired in
[12, 12.5] (TTL 3) needs a birth near 6, which no such guess gives.

So the instants are not chosen at all: the state carries a *zone*, the set of
all the instant assignments still possible, as a difference-bound matrix
(DBM) over the variables that matter (the last call's instant ``t`` and the
birth of each key still stored).  Every question the spec asks of time is a
difference constraint: ``x - b <= ttl`` (alive at ``x``), ``b - x < -ttl``
(expired), ``t <= x``, ``invoke <= x <= return``, ``x = now``.  Adding one to a
closed DBM costs O(n^2) and an empty zone means no instants explain the
order so far.  This is exact for the metadata cache (M2-M6, M6-lru, M9), which
asks nothing else of time.

One more fact keeps the branching linear: births are instants of the calls
that made them, so they do not decrease along the order, and the keys that
are expired at an instant are a prefix of the stored keys in birth order.
At each call the spec branches on that prefix (how many of the oldest are
expired at the call's instant), drops them (an expired key stays expired:
instants never decrease), and steps the model on the rest, all alive, as a
cache that never expires.  That is ``spec.models.metadata_cache`` itself, run
through :class:`~spec.linearizability.metadata_cache.MetadataCacheHistorySpec`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

from .checker import Operation
from .metadata_cache import MetadataCacheHistorySpec

__all__ = [
    "Bound",
    "TimedMetadataCacheSpec",
    "TimedStaleBirthKeptOnReAdd",
    "Zone",
    "constrain",
    "unconstrained",
]

# A bound on a difference v_i - v_j: (c, 1) is "<= c", (c, 0) is "< c"; tuples order them tightest first.
Bound = tuple[float, int]
Zone = tuple[tuple[Bound, ...], ...]  # a closed DBM: zone[i][j] bounds v_i - v_j; variable 0 is the zero
LE_ZERO: Bound = (0.0, 1)
FREE: Bound = (math.inf, 1)

# The state: the zone over (zero, t, births in birth order), the stored keys in birth order, and the
# keys in eviction order (the same as birth order, except under M6-lru).
State = tuple[Zone, tuple[Hashable, ...], tuple[Hashable, ...]]


def unconstrained(variables: int) -> Zone:
    """The zone where ``variables`` variables (the zero included) may take any values."""
    return tuple(tuple(LE_ZERO if i == j else FREE for j in range(variables)) for i in range(variables))


def constrain(zone: Zone, i: int, j: int, bound: Bound) -> Zone | None:
    """``zone`` with ``v_i - v_j`` within ``bound``, closed again (None: no assignment is left).

    The incremental closure of a closed DBM: ``d[a][b] = min(d[a][b], d[a][i] + bound + d[j][b])``.
    A sum of bounds is strict when either is (the second items: 1 for ``<=``, 0 for ``<``, and-ed).
    """
    c, strict = bound
    back_c, back_s = zone[j][i]
    total = back_c + c
    if total < 0 or (total == 0 and not (back_s & strict)):
        return None
    if bound >= zone[i][j]:
        return zone
    row_j = zone[j]
    rows = []
    for row in zone:
        via_c, via_s = row[i]
        if via_c == math.inf:
            rows.append(row)
            continue
        via_c += c
        via_s &= strict
        new: list[Bound] | None = None
        for b, (after_c, after_s) in enumerate(row_j):
            if after_c == math.inf:
                continue
            sum_c, sum_s = via_c + after_c, via_s & after_s
            current_c, current_s = row[b]
            if sum_c < current_c or (sum_c == current_c and sum_s < current_s):
                if new is None:
                    new = list(row)
                new[b] = (sum_c, sum_s)
        rows.append(row if new is None else tuple(new))
    return tuple(rows)


def _with_instant(zone: Zone, low: float, high: float) -> Zone | None:
    """``zone`` and the next call's instant x (the last index): t <= x (t is variable 1) and
    low <= x <= high.  Closed directly: x only ever leans on t and the zero, so the one constraint
    it adds between the others is t <= high."""
    if high != math.inf:
        tightened = constrain(zone, 1, 0, (high, 1))
        if tightened is None:
            return None
        zone = tightened
    zero = zone[0]
    column = []  # v_a - x <= min(v_a - t, v_a - 0 - low)
    for row in zone:
        via_t, via_zero = row[1], (row[0][0] - low, row[0][1])
        column.append(via_t if via_t <= via_zero else via_zero)
    last = tuple(FREE if high == math.inf or c == math.inf else (high + c, s) for c, s in zero)
    return (*((*row, column[a]) for a, row in enumerate(zone)), (*last, LE_ZERO))


def _select(zone: Zone, keep: Sequence[int]) -> Zone:
    """The zone over the variables ``keep`` (in that order; an index may repeat: an equal copy)."""
    return tuple(tuple(zone[i][j] for j in keep) for i in keep)


class TimedMetadataCacheSpec:
    """``spec.models.metadata_cache`` as a timed spec (``outcomes_at``) for the linearizability search."""

    def __init__(self, ttl: float, max_entries: int | None, eviction: str = "birth") -> None:
        self.ttl, self.lru = ttl, eviction == "lru"
        self.model = MetadataCacheHistorySpec(-1, max_entries, eviction)  # every key it is given is alive
        self.initial: State = (unconstrained(2), (), ())

    def step(self, state: State, name: str, args: tuple[Hashable, ...]) -> tuple[State, Any]:
        raise TypeError("a timed spec is stepped by outcomes_at (the search calls it)")

    def _instant(self, zone: Zone, op: Operation) -> Zone | None:
        """``zone`` with the call's instant x (the last variable): t <= x, invoke <= x <= return, x = now."""
        if op.now is not None:
            return _with_instant(zone, op.now, op.now)
        return _with_instant(zone, op.call, op.end)

    def _cuts(self, zone: Zone, stored: int) -> list[tuple[int, Zone]]:
        """(how many of the oldest stored keys are expired at x, the zone where exactly they are)."""
        if self.ttl == -1:
            return [(0, zone)]
        x, cuts = len(zone) - 1, []
        for cut in range(stored + 1):
            out: Zone | None = zone
            if cut > 0:  # the youngest expired key: b - x < -ttl
                out = constrain(zone, 2 + cut - 1, x, (-self.ttl, 0))
            if cut < stored and out is not None:  # the oldest alive: x - b <= ttl
                out = constrain(out, x, 2 + cut, (self.ttl, 1))
            if out is not None:
                cuts.append((cut, out))
        return cuts

    def outcomes_at(self, state: State, op: Operation) -> list[tuple[State, Any]]:
        zone, born, order = state
        timed = self._instant(zone, op)
        if timed is None:
            return []
        x = len(timed) - 1
        results: list[tuple[State, Any]] = []
        for cut, cut_zone in self._cuts(timed, len(born)):
            alive = born[cut:]
            items = tuple((k, 0.0) for k in order if k in alive)
            (after, _), answer = self.model.step((items, 0.0), op.name, op.args)
            keys_after = [k for k, _ in after]
            kept = [k for k in alive if k in keys_after]
            new = [k for k in keys_after if k not in alive]  # born at x (a batch's keys: all at x)
            variables = [0, x, *(2 + born.index(k) for k in kept), *([x] * len(new))]
            results.append(((_select(cut_zone, variables), (*kept, *new), tuple(keys_after)), answer))
        return results


class TimedStaleBirthKeptOnReAdd(TimedMetadataCacheSpec):
    """M3 in its known wrong form (O11), as a timed spec, what a trace is replayed against to tell whose
    rule made the state an answer read: an expired entry stays stored (``stale``, a fourth part of the
    state) until removed, cleared or dropped by the bound, and a re-add of it keeps its old birth, so the
    key stays expired (``spec.models.metadata_cache.StaleBirthKeptOnReAdd`` on a real clock)."""

    def __init__(self, ttl: float, max_entries: int | None, eviction: str = "birth") -> None:
        super().__init__(ttl, max_entries, eviction)
        self.max_entries = max_entries
        self.initial = (*self.initial, frozenset())  # type: ignore[assignment]

    def outcomes_at(self, state: Any, op: Operation) -> list[tuple[Any, Any]]:
        zone, born, order, stale = state
        timed = self._instant(zone, op)
        if timed is None:
            return []
        x = len(timed) - 1
        results: list[tuple[Any, Any]] = []
        for cut, cut_zone in self._cuts(timed, len(born)):
            alive, expired = born[cut:], stale | frozenset(born[:cut])
            items = tuple((k, 0.0) for k in order if k in alive)
            answer, keys_after, expired = self._step(items, expired, op)
            kept = [k for k in alive if k in keys_after]
            new = [k for k in keys_after if k not in alive]  # born at x
            variables = [0, x, *(2 + born.index(k) for k in kept), *([x] * len(new))]
            after = (_select(cut_zone, variables), (*kept, *new), tuple(keys_after), expired)
            results.append((after, answer))
        return results

    def _step(
        self, items: tuple[tuple[Hashable, float], ...], stale: frozenset[Hashable], op: Operation
    ) -> tuple[Any, list[Hashable], frozenset[Hashable]]:
        """The model's step on the live entries, with the stale ones beside it: an add of a stale key
        changes nothing; a new key added to a cache full of entries, stale ones counted, drops them (M6)."""
        if op.name not in ("add", "add_many"):
            (after, _), answer = self.model.step((items, 0.0), op.name, op.args)
            gone = set(op.args) if op.name in ("remove", "remove_many") else set()
            left = frozenset() if op.name == "clear" else stale - gone
            return answer, [k for k, _ in after], left
        for key in op.args:  # M9: the adds in order, at one instant
            if key in stale:
                continue
            live = {k for k, _ in items}
            bound = self.max_entries
            if bound is not None and key not in live and len(live) + len(stale) >= bound:
                stale = frozenset()  # the bound drops the expired entries first
            (items, _), _ = self.model.step((items, 0.0), "add", (key,))
        return None, [k for k, _ in items], stale
