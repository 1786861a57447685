"""Blame by provenance (O11): which rule of the spec made the state that a diverging answer read.

Without a ``snapshot()`` only answers are compared, and the answer that diverges is often not where the
defect is: a cache that keeps an expired entry's birth on a re-add (M3) answers wrongly in a later
``contains`` (M4's operation); an existence cache whose ``contains`` does not refresh a belief (E3)
answers wrongly in a later ``contains_all`` (E4's).  Each component lists the spec's rules that make
state in their known wrong form (``Component.provenance``: the spec with that one rule changed).  The
test for cause: the counterexample's calls, replayed on that spec alone, give every answer the target
recorded (the replay's ``got``), so the rule in its wrong form explains the divergence.  Then its clause
is blamed first.  The target is not called again: its answers are the replay's.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from ..world.clock import CountingClock
from ._session import (
    _PLAIN,
    Outcome,
    Recording,
    Replay,
    Session,
    _diverges,
    _outcome,
    _resolve,
    _spec_call,
)

__all__ = ["consistent", "made_by"]


def made_by(session: Session, recording: Recording, replayed: Replay) -> list[str]:
    """The clauses of the rules whose known wrong form gives every answer of ``replayed`` (O11), in the
    component's order."""
    component = session.component
    return [
        clause
        for clause in component.provenance
        if consistent(session, recording, replayed, component.wrong_form(clause))
    ]


def consistent(session: Session, recording: Recording, replayed: Replay, make: Callable[..., Any]) -> bool:
    """Whether the spec ``make`` builds (as the component's spec is built, under the declared choices)
    gives the target's recorded answer to every call of ``replayed`` that the replay compared (an earlier
    answer of a clause set aside is not, O2), the diverging last one included."""
    timed = recording.start is not None
    clock = CountingClock(recording.start if recording.start is not None else 0.0)
    model = make(**recording.init, **session.declared, **({"clock": clock} if timed else {}))
    last = len(replayed.calls) - 1
    for index, (call, got) in enumerate(zip(replayed.calls, replayed.got, strict=True)):
        if call.now is not None:
            clock.now = call.now
        want = _answer(session, model, call.receiver, call.method, call.bound)
        if index < last and replayed.want[index] is None:
            continue  # not compared in the replay either
        if want is not None and got[0] == want[0] == "raised":
            if got[1] != want[1]:  # the same exception type (B1's names were the replay's to check)
                return False
        elif _diverges(got, want):
            return False
    return True


def _answer(session: Session, model: Any, receiver: Any, method: str, bound: Any) -> Outcome | None:
    """The spec's answer to one call, as the replay compares it (None: not compared)."""
    spec_receiver = _resolve(model, receiver)
    projection = session.projection(method)
    if projection is not None:
        return ("value", projection.spec(spec_receiver))
    if not hasattr(spec_receiver, method):
        return None
    want = _outcome(partial(_spec_call, getattr(spec_receiver, method), bound))
    if want[0] == "value" and (want[1] is None or not isinstance(want[1], _PLAIN)):
        return None
    return want
