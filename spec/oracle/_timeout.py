"""The oracle never hangs: every call to a target runs under a call timeout (O8, ``--call-timeout``).

A :class:`CallGuard` runs each call of a sequential run in one worker thread of its own and waits for
it at most ``timeout`` seconds.  A call that does not return in time (a spin, a lock taken twice) is
abandoned: the guard raises :class:`CallTimedOut` in the oracle's thread, naming the call, the calls in
flight and every thread's stack, and asks the worker to stop (an exception raised in it at its next
bytecode: a spin ends there; a thread blocked in C stays blocked, a daemon the process does not wait
for).  :func:`thread_stacks` and :func:`stop_thread` are the pieces a mode with threads of its own
reuses.  The default, :data:`CALL_TIMEOUT`, is far above any correct call, even on a loaded machine.
"""

from __future__ import annotations

import ctypes
import gc
import sys
import threading
import traceback
import weakref
from collections.abc import Callable, Mapping
from types import FrameType
from typing import Any, TypeVar, cast

__all__ = ["CALL_TIMEOUT", "CallGuard", "CallTimedOut", "stop_thread", "thread_stacks"]

CALL_TIMEOUT = 10.0  # seconds: a call of a correct target returns in microseconds

T = TypeVar("T")


class CallTimedOut(KeyboardInterrupt):
    """A call to the target did not return within the call timeout.

    A KeyboardInterrupt, so that it ends the search at once: Hypothesis lets an interruption through
    without replaying or shrinking the example (each replay would hang again).  ``call`` is the call,
    ``in_flight`` every call started and not returned (the call among them), ``stacks`` every thread's
    stack when the time ran out.
    """

    def __init__(self, call: str, in_flight: list[str], stacks: str, timeout: float) -> None:
        self.call, self.in_flight, self.stacks, self.timeout = call, in_flight, stacks, timeout
        flight = ", ".join(in_flight)
        super().__init__(f"{call} did not return within {timeout:g} s (calls in flight: {flight})")


class _StopCall(BaseException):
    """Raised asynchronously in an abandoned worker: a spinning call stops at its next bytecode."""


def current_frames() -> dict[int, FrameType]:
    """``sys._current_frames()`` with the garbage collector off: CPython before 3.12 holds its thread-list
    lock while it builds the dict, and a collection started there can run a finalizer that needs the same
    lock, a deadlock (CPython gh-106883) that hung a --threads run once."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return sys._current_frames()
    finally:
        if enabled:
            gc.enable()


def thread_stacks(names: Mapping[int, str] | None = None) -> str:
    """Every thread's stack now (``sys._current_frames``), most recent call last, each headed by its name
    (``names``: thread ident -> a name of the caller's, e.g. ``"t1"``; else the thread's own)."""
    own = {thread.ident: thread.name for thread in threading.enumerate()}
    parts = []
    for ident, frame in sorted(current_frames().items()):
        name = (names or {}).get(ident) or own.get(ident, "?")
        stack = "".join(traceback.format_stack(frame))
        parts.append(f"thread {name} ({ident}), most recent call last:\n{stack}")
    return "".join(parts)


def stop_thread(thread: threading.Thread, error: type[BaseException] = _StopCall) -> None:
    """Raise ``error`` in ``thread`` at its next bytecode (a spin stops there; a thread blocked in C, on a
    lock say, stays blocked until it wakes)."""
    if thread.ident is not None and thread.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(error))


class _Worker(threading.Thread):
    """The thread a guard runs the target's calls in, one at a time."""

    def __init__(self) -> None:
        super().__init__(name="hicache-oracle-call", daemon=True)
        self.go = threading.Semaphore(0)
        self.done = threading.Event()
        self.job: Callable[[], Any] | None = None
        self.outcome: tuple[bool, Any] = (True, None)  # (returned, the answer or the exception)

    def run(self) -> None:
        try:
            while True:
                self.go.acquire()
                job, self.job = self.job, None
                if job is None:
                    return
                try:
                    self.outcome = (True, job())
                except _StopCall:
                    return  # abandoned: its call was past the timeout
                except BaseException as error:  # every answer is carried to the oracle's thread
                    self.outcome = (False, error)
                job = None  # nothing of the call kept while idle (its guard may then be collected)
                self.done.set()
        except _StopCall:
            return  # abandoned: its call was past the timeout


class CallGuard:
    """Runs a sequential run's calls to the target under a call timeout (None: directly, unguarded)."""

    def __init__(self, timeout: float | None = CALL_TIMEOUT) -> None:
        if timeout is not None and not timeout > 0:
            raise ValueError(f"call_timeout must be > 0, got {timeout!r}")
        self.timeout = timeout
        self.in_flight: list[str] = []  # the calls started and not returned (an abandoned one stays)
        self._worker: _Worker | None = None

    def run(self, call: Callable[[], T], text: str) -> T:
        """``call()``'s answer, or its exception; :class:`CallTimedOut` past the timeout.  ``text`` names
        the call in the report (``cache.add('a')``)."""
        worker = self._worker
        if self.timeout is None:
            return call()
        if threading.current_thread() is worker:  # a call made inside one the worker runs (a callback,
            self.in_flight.append(text)  # B1's bad inputs one by one): run here, named while under way
            try:
                return call()
            finally:
                self.in_flight.pop()
        if worker is None or not worker.is_alive():
            worker = self._worker = _Worker()
            worker.start()
            weakref.finalize(self, _retire, worker)  # a guard no one closed: its idle worker ends with it
        worker.job = call
        worker.done.clear()
        self.in_flight.append(text)
        worker.go.release()
        if not worker.done.wait(self.timeout):
            self._worker = None  # abandoned: a later call gets a fresh worker
            stacks = thread_stacks({worker.ident or -1: f"{worker.name} (the call)"})
            stop_thread(worker)
            # A call that returned just past the timeout leaves its worker blocked on ``go``, where the
            # exception above is not delivered: wake it with no job, so it ends either way.
            worker.job = None
            worker.go.release()
            # The innermost call in flight is the one that did not return (a call run inside this one).
            raise CallTimedOut(self.in_flight[-1], list(self.in_flight), stacks, self.timeout)
        self.in_flight.pop()
        returned: bool = worker.outcome[0]
        answer: Any = worker.outcome[1]
        worker.outcome = (True, None)
        if not returned:
            raise answer
        return cast("T", answer)

    def close(self) -> None:
        """End the worker thread (a guard that is done)."""
        worker, self._worker = self._worker, None
        if worker is not None:
            _retire(worker)


def _retire(worker: _Worker) -> None:
    """Let an idle worker end (a call under way finishes first; an abandoned one was stopped)."""
    if worker.is_alive():
        worker.job = None
        worker.go.release()
