"""The one generator of the threads' scripts: per call, a roll and a table of weighted picks.

Every workload of real threads (the batches of :mod:`spec.linearizability.metadata_cache` and
:mod:`spec.linearizability.file_store`, the oracle's ``--threads`` in ``spec/oracle/_threads.py``) is a
script per thread, drawn call by call from one seeded generator: first the call's roll
(``rng.random()``), then, for a workload with ``keys``, its key (``rng.choice(keys)``), then the first
:class:`Pick` of the table whose ``when`` holds makes the call (and draws what else it needs).  The draws
of each workload are fixed by its table, so a seed gives the same scripts, and a test that pins the
history where a race is caught keeps its history.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

__all__ = ["Call", "Pick", "Script", "always", "below", "weighted_scripts"]

Call = tuple[str, tuple[Hashable, ...]]  # a method's name and its arguments
Script = list[Call]


@dataclass(frozen=True)
class Pick:
    """One kind of call: taken when ``when(thread, roll, rng)`` holds (``when`` may draw: a second chance
    for a batch), made by ``make(rng, key)`` (``key`` the call's key, None for a workload without one)."""

    when: Callable[[int, float, random.Random], bool]
    make: Callable[[random.Random, Hashable], Call]


def below(threshold: float) -> Callable[[int, float, random.Random], bool]:
    """The ``when`` of a pick taken for a roll below ``threshold`` (the table's cumulative weights)."""
    return lambda thread, roll, rng: roll < threshold


def always(thread: int, roll: float, rng: random.Random) -> bool:
    """The ``when`` of a table's last pick."""
    return True


def weighted_scripts(
    rng: random.Random,
    threads: int,
    length: int,
    picks: Sequence[Pick],
    keys: Sequence[Hashable] | None = None,
) -> list[Script]:
    """One script of ``length`` calls per thread: for each call the roll, the key (with ``keys``), then the
    first of ``picks`` whose ``when`` holds makes it.  The table must end in a pick that is always taken."""
    scripts: list[Script] = []
    for thread in range(threads):
        script: Script = []
        for _ in range(length):
            roll = rng.random()
            key = None if keys is None else rng.choice(keys)
            pick = next(p for p in picks if p.when(thread, roll, rng))
            script.append(pick.make(rng, key))
        scripts.append(script)
    return scripts
