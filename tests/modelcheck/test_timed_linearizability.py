"""Timed linearizability of the metadata cache (O7): the zone search agrees with brute force.

``TimedMetadataCacheSpec`` never picks instants; it keeps every assignment
still possible as a zone of difference constraints.  These tests pin its
verdicts on hand-made traces where guessing instants goes wrong, then compare
it on seeded random small histories with a brute-force search over every
real-time order and every instant on a grid fine enough for their integer
bounds (1/8 s; the bounds and the TTLs are whole seconds, and a history has at
most 4 calls).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Hashable, Sequence
from typing import Any

import pytest

from spec.linearizability.checker import Operation, check_history
from spec.linearizability.metadata_cache import MetadataCacheHistorySpec
from spec.linearizability.timed import TimedMetadataCacheSpec, constrain, unconstrained

Op = Operation


@pytest.mark.clauses("O7", "M2", "M4")
def test_a_birth_between_the_guesses_explains_an_early_hit_and_a_late_miss() -> None:
    """add in [0, 10]; alive at some instant of [5, 20]; expired at some instant of [12, 12.5]; TTL 3.

    Only a birth in [2, 9.5) explains both (the hit at max(birth, 5) .. birth + 3, the miss after birth + 3
    by 12.5): neither the earliest (0) nor the latest (10) instant of the add does.
    """
    spec = TimedMetadataCacheSpec(3.0, None)
    history = [
        Op(0, "add", ("a",), None, 0, 10),
        Op(1, "contains", ("a",), True, 5, 20),
        Op(2, "contains", ("a",), False, 12, 12.5),
    ]
    assert check_history(history, spec).linearizable is True
    pinned = [*history, Op(1, "contains", ("a",), True, 9.6, 9.7, now=9.6)]  # so birth >= 6.6
    assert check_history(pinned, spec).linearizable is True
    late_miss = [*history[:2], Op(2, "contains", ("a",), False, 12, 12.5, now=12.0)]  # birth < 9
    assert (
        check_history([*late_miss, Op(1, "contains", ("a",), True, 12.1, 12.2)], spec).linearizable is False
    )


@pytest.mark.clauses("O7", "M2")
def test_the_boundary_is_inclusive_and_a_miss_needs_an_instant_strictly_after_it() -> None:
    spec = TimedMetadataCacheSpec(3.0, None)
    add = Op(0, "add", ("a",), None, 1, 1)
    assert check_history([add, Op(1, "contains", ("a",), True, 4, 4)], spec).linearizable is True
    assert check_history([add, Op(1, "contains", ("a",), False, 4, 4)], spec).linearizable is False
    assert check_history([add, Op(1, "contains", ("a",), False, 4, 4.001)], spec).linearizable is True


@pytest.mark.clauses("O7", "M6", "M5")
def test_a_bounded_cache_expires_the_oldest_first_and_len_counts_the_live() -> None:
    spec = TimedMetadataCacheSpec(3.0, 2)
    adds = [Op(0, "add", (k,), None, t, t + 0.5) for k, t in (("a", 0), ("b", 2), ("c", 4))]
    assert check_history([*adds, Op(0, "contains", ("a",), False, 5, 6)], spec).linearizable is True
    assert check_history([*adds, Op(0, "contains", ("a",), True, 5, 6)], spec).linearizable is False
    assert check_history([*adds, Op(0, "len", (), 1, 7, 7)], spec).linearizable is True  # b expired by 7
    assert check_history([*adds, Op(0, "len", (), 2, 7, 7)], spec).linearizable is False


def test_a_zone_refuses_contradicting_constraints_and_keeps_strictness() -> None:
    zone = unconstrained(3)
    at_most = constrain(zone, 1, 2, (3.0, 1))  # v1 - v2 <= 3
    assert at_most is not None
    assert constrain(at_most, 2, 1, (-3.0, 1)) is not None  # v2 - v1 <= -3: v1 - v2 = 3 still possible
    assert constrain(at_most, 2, 1, (-3.0, 0)) is None  # v2 - v1 < -3: v1 - v2 > 3, refused
    chained = constrain(constrain(at_most, 2, 0, (1.0, 0)) or zone, 0, 1, (-5.0, 1))  # v2 < 1, v1 >= 5
    assert chained is None  # v1 - v2 > 4


# -- brute force on a grid ------------------------------------------------------------------------------

GRID = 8  # instants in eighths of a second


def _brute(history: Sequence[Operation], ttl: float, bound: int | None, eviction: str) -> bool:
    model = MetadataCacheHistorySpec(ttl, bound, eviction)
    n = len(history)
    for order in itertools.permutations(range(n)):
        position = {op: i for i, op in enumerate(order)}
        if any(
            history[a].end < history[b].call and position[a] > position[b] for a in range(n) for b in range(n)
        ):
            continue
        states: set[tuple[Any, float]] = {((), -1.0)}
        for index in order:
            op = history[index]
            ends = (op.now, op.now) if op.now is not None else (op.call, op.end)
            grid = [k / GRID for k in range(int(ends[0] * GRID), int(ends[1] * GRID) + 1)]
            after = set()
            for items, clock in states:
                for x in grid:
                    if x < clock:
                        continue
                    (kept, _), answer = model.step((items, x), op.name, op.args)
                    if answer == op.result:
                        after.add((kept, x))
            states = after
            if not states:
                break
        if states:
            return True
    return False


def _random_history(rng: random.Random) -> list[Operation]:
    history = []
    for thread in range(rng.randint(1, 4)):
        name = rng.choice(["add", "add", "contains", "contains", "contains", "len", "remove"])
        call = rng.randint(0, 5)
        ret = call + rng.randint(0, 2)
        now = rng.randint(call * GRID, ret * GRID) / GRID if rng.random() < 0.2 else None
        args: tuple[Hashable, ...] = () if name == "len" else (rng.choice("ab"),)
        result = {"contains": rng.random() < 0.5, "len": rng.randint(0, 2)}.get(name)
        history.append(Op(thread, name, args, result, call, ret, now))
    return history


@pytest.mark.clauses("O7", "M2", "M3", "M4", "M5", "M6")
@pytest.mark.parametrize(
    ("ttl", "bound", "eviction"), [(1.0, None, "birth"), (2.0, 1, "birth"), (1.0, 1, "lru")]
)
def test_the_zone_search_agrees_with_brute_force_on_random_small_histories(
    ttl: float, bound: int | None, eviction: str
) -> None:
    rng = random.Random(f"{ttl}-{bound}-{eviction}")
    spec = TimedMetadataCacheSpec(ttl, bound, eviction)
    verdicts = []
    for _ in range(120):
        history = _random_history(rng)
        zone = check_history(history, spec).linearizable
        assert zone is _brute(history, ttl, bound, eviction), "\n".join(map(str, history))
        verdicts.append(zone)
    assert True in verdicts and False in verdicts  # both verdicts were exercised
