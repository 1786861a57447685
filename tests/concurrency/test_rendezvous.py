"""The rendezvous that makes real-thread calls overlap by construction (spec/linearizability/recording.py).

What the linearizability batches rely on: at a meeting the leader's call spans
the followers' calls, which run one after another in thread order; a meeting
point inside the leader's operation is where it holds; uneven scripts and a
failing thread end the run instead of wedging it.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Hashable

import pytest

from spec.linearizability.checker import Operation
from spec.linearizability.recording import (
    HistoryRecorder,
    Rendezvous,
    RendezvousError,
    meeting_point,
    meetings_of,
    run_threads,
)

pytestmark = pytest.mark.threads

Script = list[tuple[str, tuple[Hashable, ...]]]


class Logged:
    """A target whose ``op`` logs when each call starts and ends; ``checked`` holds at a meeting point."""

    def __init__(self) -> None:
        self.log: list[tuple[str, int, int]] = []
        self._ticks = itertools.count()
        self._lock = threading.Lock()

    def _note(self, what: str, index: int) -> None:
        with self._lock:
            self.log.append((what, index, next(self._ticks)))

    def op(self, thread: int, index: int) -> None:
        self._note(f"start {thread}", index)
        self._note(f"end {thread}", index)

    def checked(self, thread: int, index: int) -> None:
        self._note(f"check {thread}", index)
        meeting_point()
        self._note(f"act {thread}", index)

    def fails(self, thread: int, index: int) -> None:
        raise KeyError(f"thread {thread} fails at call {index}")


def scripts(lengths: list[int], name: str = "op") -> list[Script]:
    return [[(name, (t, i)) for i in range(n)] for t, n in enumerate(lengths)]


def events_at(target: Logged, index: int) -> list[str]:
    return [what for what, i, _ in sorted(target.log, key=lambda e: e[2]) if i == index]


def test_at_each_meeting_the_leader_spans_the_followers_calls_made_in_thread_order() -> None:
    target = Logged()
    history = run_threads(HistoryRecorder(), target, scripts([5, 3, 7]), meet_every=2)
    assert len(history) == 15, "uneven scripts ran to their ends"
    for index in (0, 2):  # the meetings: below the shortest script's length (3)
        assert events_at(target, index) == ["start 0", "end 0", "start 1", "end 1", "start 2", "end 2"]
        calls = {op.thread: op for op in history if op.args[1] == index}
        leader = calls[0]
        assert all(leader.call <= calls[t].call and calls[t].end <= leader.end for t in (1, 2))
        assert calls[1].end <= calls[2].call, "followers' intervals are as tight as their calls"
    assert meetings_of(scripts([5, 3, 7]), 2) == 2


def test_a_meeting_point_inside_the_leaders_call_is_where_the_followers_act() -> None:
    target = Logged()
    run_threads(HistoryRecorder(), target, scripts([4, 4, 4], "checked"), meet_every=4)
    assert events_at(target, 0) == [
        "check 0",
        "check 1",
        "act 1",
        "check 2",
        "act 2",
        "act 0",
    ], "the followers' meeting points are no-ops; the leader holds at its own"


def test_a_meeting_point_outside_a_meeting_is_a_no_op() -> None:
    meeting_point()  # not inside a leader's meeting call: returns at once
    target = Logged()
    run_threads(HistoryRecorder(), target, scripts([3, 3], "checked"))  # no meetings at all
    assert len(target.log) == 12


@pytest.mark.parametrize("failing", [0, 1, 2])
def test_a_thread_that_fails_at_a_meeting_ends_the_run_with_its_error(failing: int) -> None:
    target = Logged()
    work = scripts([6, 6, 6])
    work[failing][2] = ("fails", (failing, 2))  # call 2 is a meeting (meet_every=2)
    with pytest.raises(KeyError, match=f"thread {failing} fails at call 2"):
        run_threads(HistoryRecorder(), target, work, meet_every=2)


def test_a_follower_whose_leader_never_comes_gets_a_rendezvous_error_not_a_wedge() -> None:
    rendezvous = Rendezvous(threads=2, every=1, shortest=1, timeout=0.05)
    with pytest.raises(RendezvousError, match="no thread gave turn"):
        rendezvous.follow(1, 0, lambda: None)
    with pytest.raises(RendezvousError, match="broken"):
        rendezvous.follow(1, 0, lambda: None)  # and it stays broken for everyone


def test_without_other_threads_a_meeting_holds_nothing() -> None:
    history: list[Operation] = run_threads(HistoryRecorder(), Logged(), scripts([3]), meet_every=1)
    assert len(history) == 3
    assert meetings_of(scripts([3]), 1) == 0
