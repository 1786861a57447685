"""A bounded exhaustive refinement checker: every sequence of operations up to a depth.

The checker is generic.  A component supplies :class:`Configuration` objects, each
building a fresh :class:`Pair` (the implementation and the spec in one fake world);
the explorer searches breadth-first over the states the pair can reach:

* a state is named by the *abstraction* of the implementation's state (the
  refinement mapping onto the spec's state), refined where needed by hidden
  state (:meth:`Pair.fingerprint`); paths reaching one state are explored once;
* every transition performs one operation on both sides and compares the two
  answers, then the two abstract states, then the implementation's own
  invariants; the first disagreement is a counterexample, a shortest one;
* states are not copied (production objects hold locks and closures): a state
  is rebuilt by replaying its shortest path from a fresh pair, O(depth) per
  transition, needing nothing from the implementation.

Deduplication is sound when the fingerprint determines the implementation's future
behaviour.  The abstraction alone does not always: an entry expired (so not in
the abstract state) but not purged yet can change what a later ``add`` does, and
merging on the abstraction would prune exactly the paths that show such a bug.
``states`` counts fingerprints, ``abstract_states`` the abstract states among them.

When a whole level adds no new state, every reachable state has been expanded
with every operation: the search is *complete* (a fixpoint).
"""

from __future__ import annotations

import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

__all__ = [
    "Configuration",
    "Counterexample",
    "Op",
    "Pair",
    "Progress",
    "Result",
    "explore",
    "outcome",
    "print_progress",
]

Op = tuple[Hashable, ...]
"""An operation: its name, then its arguments (hashable, printable)."""


def outcome(call: Callable[[], Any]) -> Any:
    """The answer, or the exception type and message (both sides must raise alike, B1)."""
    try:
        return call()
    except (TypeError, ValueError) as exc:
        return ("raises", type(exc).__name__)


class Pair(ABC):
    """An implementation and the spec, built fresh in one fake world, driven in lock step."""

    implementation: Any
    spec: Any

    @abstractmethod
    def operations(self) -> Sequence[Op]:
        """The operations enabled in the current state (the same list for the same abstract state)."""

    @abstractmethod
    def perform(self, op: Op) -> tuple[Any, Any]:
        """Perform ``op`` on both sides; return (implementation answer, spec answer)."""

    def both(self, call: Callable[[Any], Any]) -> tuple[Any, Any]:
        """``call`` on the implementation, then on the spec: the two :func:`outcome`\\ s."""
        return outcome(lambda: call(self.implementation)), outcome(lambda: call(self.spec))

    def abstract(self, side: Any) -> Hashable:
        """One side's state, in the form both share (default: its ``snapshot()``, as a tuple)."""
        return tuple(side.snapshot())

    def abstract_implementation(self) -> Hashable:
        """The refinement mapping: the implementation's state, as the spec would hold it."""
        return self.abstract(self.implementation)

    def abstract_spec(self) -> Hashable:
        """The spec's state, in the same form as :meth:`abstract_implementation`."""
        return self.abstract(self.spec)

    def fingerprint(self) -> Hashable:
        """The implementation's state in a finite form, the unit of deduplication (default: the abstraction;
        finer where hidden state can change a later answer, see the module's docstring)."""
        return self.abstract_implementation()

    def check_invariants(self) -> None:
        """Assert the implementation's internal invariants: its ``check_invariants()``, if it has one."""
        check = getattr(self.implementation, "check_invariants", None)
        if check is not None:
            check()


@dataclass(frozen=True)
class Configuration:
    """One small domain of one component: a name and a way to build a fresh pair."""

    name: str
    build: Callable[[], Pair]


@dataclass(frozen=True)
class Counterexample:
    """A shortest operation sequence after which implementation and spec disagree."""

    configuration: str
    trace: tuple[Op, ...]
    reason: str

    def render(self) -> str:
        steps = "\n".join(f"  {i + 1}. {_show(op)}" for i, op in enumerate(self.trace))
        return (
            f"counterexample in {self.configuration} at depth {len(self.trace)}:\n{steps}\n  -> {self.reason}"
        )


@dataclass
class Result:
    """What one exploration covered, model-checker style."""

    configuration: str
    max_depth: int
    states: int = 0  # distinct fingerprints explored
    abstract_states: int = 0  # distinct abstract (spec) states among them
    transitions: int = 0
    diameter: int = 0  # the deepest level at which a new state was found
    levels: int = 0  # levels whose every transition was checked
    complete: bool = False  # a level found no new state: every reachable state was expanded
    seconds: float = 0.0
    counterexample: Counterexample | None = None
    states_per_level: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.counterexample is None


Progress = Callable[[Result, int], None]
"""Called now and then during a search with the figures so far and the frontier size."""


def _show(op: Op) -> str:
    name, *args = op
    return f"{name}({', '.join(repr(a) for a in args)})" if args else str(name)


def _replay(config: Configuration, path: tuple[Op, ...]) -> Pair:
    pair = config.build()
    for op in path:
        pair.perform(op)
    return pair


def _judge(pair: Pair, op: Op | None) -> tuple[Hashable, Hashable] | str:
    """Perform ``op`` (if any); the (fingerprint, abstract state) reached, or what went wrong."""
    if op is not None:
        try:
            got, want = pair.perform(op)
        except AssertionError as exc:  # the pair's own answer checks (e.g. a counter delta)
            return f"{_show(op)}: {exc}"
        if got != want:
            return f"{_show(op)} answered {got!r}, the spec answers {want!r}"
    implementation, spec = pair.abstract_implementation(), pair.abstract_spec()
    if implementation != spec:
        return f"abstract states differ: implementation {implementation!r}, spec {spec!r}"
    try:
        pair.check_invariants()
    except AssertionError as exc:
        return f"invariant broken: {exc}"
    return pair.fingerprint(), implementation


def explore(config: Configuration, max_depth: int, *, progress: Progress | None = None) -> Result:
    """Breadth-first search of every operation sequence of length <= ``max_depth``.

    Stops at the first counterexample (a shortest one), at the depth bound, or
    at a fixpoint (``complete``).  Cost: O(states * operations * depth).
    ``progress`` is called about once a second.
    """
    if max_depth < 0:
        raise ValueError(f"max_depth must be >= 0, got {max_depth!r}")
    result = Result(configuration=config.name, max_depth=max_depth)
    start = last_report = time.perf_counter()
    seen: set[Hashable] = set()
    abstract: set[Hashable] = set()
    try:
        root = _judge(config.build(), None)
        if isinstance(root, str):
            result.counterexample = Counterexample(config.name, (), root)
            return result
        seen.add(root[0])
        abstract.add(root[1])
        frontier: list[tuple[Op, ...]] = [()]
        result.states_per_level.append(1)
        for depth in range(1, max_depth + 1):
            discovered: list[tuple[Op, ...]] = []
            for path in frontier:
                listing = _replay(config, path)
                for index, op in enumerate(listing.operations()):
                    result.transitions += 1
                    state = _judge(listing if index == 0 else _replay(config, path), op)
                    if isinstance(state, str):
                        result.counterexample = Counterexample(config.name, (*path, op), state)
                        return result
                    if state[0] not in seen:
                        seen.add(state[0])
                        abstract.add(state[1])
                        discovered.append((*path, op))
                if progress is not None and time.perf_counter() - last_report >= 1.0:
                    last_report = time.perf_counter()
                    result.states, result.seconds, result.levels = len(seen), last_report - start, depth - 1
                    progress(result, len(frontier))
            result.levels = depth
            result.states_per_level.append(len(discovered))
            if not discovered:
                result.complete = True
                break
            result.diameter = depth
            frontier = discovered
    finally:
        result.states, result.abstract_states = len(seen), len(abstract)
        result.seconds = time.perf_counter() - start
    return result


def print_progress(stream: TextIO = sys.stderr) -> Progress:
    """A progress display for long runs: one overwritten line on ``stream``."""

    def show(result: Result, frontier: int) -> None:
        stream.write(
            f"\r  {result.configuration}: level {result.levels + 1}/{result.max_depth},"
            f" {result.states} states, {result.transitions} transitions, frontier {frontier},"
            f" {result.seconds:.0f}s   "
        )
        stream.flush()

    return show
