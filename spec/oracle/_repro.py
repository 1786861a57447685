"""The reproduction file: the shrunk calls as a self-contained pytest test.

The file imports the target by its import path (``HICACHE_ORACLE_TARGET`` in
the environment overrides it, to run the same calls against a fixed version),
controls time the way the oracle did, replays the calls in the target's own
API, and asserts the spec's answer at every compared call.  Against the target
it fails at the divergence; against a correct implementation it passes.
"""

from __future__ import annotations

import inspect
from typing import Any

from ..conformance.clauses import CLAUSES
from ._session import Call, PerPoolRegistry, Recording, Replay, Session, _repr
from ._time import control_time, time_modules

__all__ = [
    "call_notes",
    "divergence",
    "render_calls",
    "render_opening",
    "render_program_repro",
    "render_refusal_repro",
    "render_repro",
]

# The clock a reproduction file defines for itself (the files are self-contained): the project's one fake
# clock is spec.world.clock.CountingClock, which the oracle runs on; this is its text as the files print it.
FAKE_CLOCK_SOURCE = '''class FakeClock:
    """A clock that only moves when told to, and counts its readings (the reproduction files' copy)."""

    def __init__(self, now: float) -> None:
        self.now = now
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return self.now'''

_TITLES = {clause.id: clause.title for clause in CLAUSES}


def _expression(session: Session, receiver: str, method: str, bound: tuple[tuple[str, Any], ...]) -> str:
    pool, call = session.target_call(method, bound)
    if pool:
        receiver = f"{receiver}.{session.adapter.name_of('pool')}({_repr(pool[0])})"
    if call.method == "__len__":
        return f"len({receiver})"
    parts = [_repr(a) for a in call.args] + [f"{k}={_repr(v)}" for k, v in call.kwargs.items()]
    return f"{receiver}.{call.method}({', '.join(parts)})"


def _clock_moves(calls: list[Call], start: float | None) -> list[list[str]]:
    """Before each call, the line that moves the clock to its instant (``clock.now = ...``) if it moved."""
    moves, now = [], start
    for call in calls:
        moved = call.now is not None and call.now != now
        moves.append([f"clock.now = {call.now!r}"] * moved)
        now = call.now if moved else now
    return moves


def render_calls(
    session: Session, calls: list[Call], start: float | None, notes: list[str] | None = None
) -> list[str]:
    """The calls as lines of code, with the clock moves between them (``clock.now = ...``); a call's
    note (``notes``, one per call, "" for none) follows it as a comment."""
    notes = notes or [""] * len(calls)
    moves = zip(_clock_moves(calls, start), calls, notes, strict=True)
    return [
        line
        for move, call, note in moves
        for line in (*move, render_call(session, call) + (f"  # {note}" if note else ""))
    ]


def render_opening(session: Session, recording: Recording, target_path: str) -> list[str]:
    """The lines a text counterexample starts with: the clock's start, then the construction call with
    its arguments (``cache = FastCache(1.0, max_entries=1, clock=clock)``)."""
    timed = recording.start is not None
    lines = []
    if timed:
        how = (
            ""
            if session.time_control == "injected"
            else "  # the target's clock reads it: " + (session.time.where() or "patched")
        )
        lines.append(f"clock = FakeClock({recording.start!r}){how}")
    name = target_path.rpartition(":")[2] if ":" in target_path else "target"  # not a repr
    constructor = session.constructor_text(recording.init, timed)
    lines.append(f"cache = {name}{constructor.removeprefix('target')}")
    return lines


def call_notes(result: Replay) -> list[str]:
    """Per call of a counterexample, its note: the target's exception where it raised one (with its
    message), and both answers at the divergence."""
    notes = [f"raised {error}" if error else "" for error in result.errors]
    notes += [""] * (len(result.calls) - len(notes))
    if result.divergence is not None and notes:
        notes[-1] = _answers(result)
    return notes


def render_call(session: Session, call: Call, root: str = "cache") -> str:
    """One call in the target's API, e.g. ``cache.has('a')``."""
    receiver = root
    for method, bound in call.receiver:
        receiver = _expression(session, receiver, method, bound)
    return _expression(session, receiver, call.method, call.bound)


def _clause_line(clauses: list[str]) -> str:
    return "; ".join(f"{c} ({_TITLES.get(c, '?')})" for c in clauses) or "the target's own invariants"


def _declared(session: Session) -> str:
    return ", ".join(f"{name}={value}" for name, value in session.declared.items())


def divergence(session: Session, result: Replay) -> str:
    """The diverging call (the last) and both answers, e.g. ``cache.has('a') answered False; ...``."""
    return f"{render_call(session, result.calls[-1])} {_answers(result)}"


def _naming(want: Any) -> str:
    """B1: " naming key" for a refusal whose message must name the parameter (or the target's name of it)."""
    return f" naming {' or '.join(want[2])}" if len(want) > 2 else ""


def _answers(result: Replay) -> str:
    """What the last call answered and what the spec answers (an exception with its message)."""
    got, want = result.got[-1], result.want[-1]
    raised = (result.errors[-1] if result.errors else "") or got[1]  # with its message where known
    if want is None:
        return f"raised {raised}"
    if got[0] == "clock readings":
        return f"read the clock {got[1]} times; one instant reads it once (M9)"
    answer = f"answered {got[1]!r}" if got[0] == "value" else f"raised {raised}"
    expected = f"answers {want[1]!r}" if want[0] == "value" else f"raises {want[1]}{_naming(want)}"
    return f"{answer}; the spec {expected}"


_IMPORTS = """from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest"""


def _opening(title: str, target_path: str, about: list[str], imports: str) -> list[str]:
    """The docstring, the imports and the ``TARGET`` line that open every reproduction file."""
    head = f'"""Reproduction from the HiCache regression oracle: {title}\n\nTarget: {target_path}'
    target = f"TARGET = os.environ.get('HICACHE_ORACLE_TARGET', {target_path!r})"
    return [head, *about, '"""', "", imports, "", target]


def render_refusal_repro(clause: str, call: str, target_path: str) -> str:
    """A pytest file in which the constructor call ``call`` raises though ``clause`` allows it (O5)."""
    title = f"the constructor refuses arguments that {clause} allows."
    lines = [
        *_opening(title, target_path, [], "import importlib\nimport os"),
        "",
        "",
        *([FAKE_CLOCK_SOURCE, "", ""] if "clock" in call else []),
        f"def test_the_constructor_takes_what_{clause}_allows() -> None:",
        "    module, _, name = TARGET.partition(':')",
        "    target = importlib.import_module(module)",
        "    for part in name.split('.'):",
        "        target = getattr(target, part)",
        *(["    clock = FakeClock(1000.0)"] if "clock" in call else []),
        f"    {call}",
    ]
    return "\n".join(lines) + "\n"


def render_repro(
    session: Session, result: Replay, recording: Recording, target_path: str, clauses: list[str]
) -> str:
    """The text of a pytest file that reproduces ``result``'s divergence (the calls of ``recording``)."""
    init, start = recording.init, recording.start
    component = session.component
    what = divergence(session, result)
    timed, pool_class = start is not None, session.per_pool_class
    about = [
        f"Breaks: {_clause_line(clauses)} (docs/SEMANTICS.md).",
        f"Divergence: {what}.",
        f"Time: {session.describe_time()}.",
        *([f"Declared: {_declared(session)} (the spec's answers follow them)."] if session.declared else []),
        "",
        "Run with pytest.  HICACHE_ORACLE_TARGET=package.module:Name runs the same calls against another",
        "implementation (a correct one passes).",
    ]
    lines = [
        *_opening(f"{component.name}, {len(result.calls)} calls.", target_path, about, _IMPORTS),
        "",
        "",
        "def load(path: str) -> Any:",
        "    module, _, name = path.partition(':')",
        "    obj: Any = importlib.import_module(module)",
        "    for part in name.split('.'):",
        "        obj = getattr(obj, part)",
        "    return obj",
        "",
    ]
    patched = timed and session.time_control == "patched"
    copied: list[Any] = [control_time, time_modules] * patched + [PerPoolRegistry] * pool_class
    for source in [FAKE_CLOCK_SOURCE] * timed + [inspect.getsource(c).rstrip() for c in copied]:
        lines += ["", source, ""]
    test_name = (
        f"test_{component.name.replace('-', '_')}_answers_as_the_spec_{'_'.join(clauses) or 'invariants'}"
    )
    lines += ["", f"def {test_name}() -> None:", "    target = load(TARGET)"]
    body = [f"clock = FakeClock({start!r})"] * (timed and not patched)
    constructor = session.constructor_text(init, timed)
    if pool_class:
        body.append(f"cache = PerPoolRegistry(lambda: {constructor})  # the oracle keeps one per pool name")
    else:
        body.append(f"cache = {constructor}")
    if patched and not pool_class:  # the modules of the classes of what a factory TARGET builds
        body.append("patched += [(module, control_time(module, clock)) for module in time_modules(cache)]")
    note = f"{', '.join(clauses) or 'invariants'}: the spec answers"
    moves = _clock_moves(result.calls, start)
    for move, call, expected in zip(moves, result.calls, result.want, strict=True):
        expression = render_call(session, call)
        projection = session.projection(call.method)
        body += move
        if expected is not None and expected[0] == "clock readings":  # one instant, one reading (M9)
            body += ["reads = clock.reads", expression]
            body.append(f"assert clock.reads - reads <= 1, {'M9: one instant reads the clock once'!r}")
        elif expected is None:
            body.append(expression)
        elif expected[0] == "raised":
            names = "|".join(expected[2]) if len(expected) > 2 else ""  # B1: naming the parameter
            match = f", match=r'\\b(?:{names})\\b'" if names else ""
            body += [f"with pytest.raises({expected[1]}{match}):", f"    {expression}"]
        elif projection is not None:
            body.append(f"answer = {expression}")
            body.append(
                f"assert {projection.render.format(r='answer')} == {expected[1]!r}, "
                f"{note + ' ' + repr(expected[1])!r}"
            )
        else:
            relation = "is" if isinstance(expected[1], bool) or expected[1] is None else "=="
            body.append(f"assert {expression} {relation} {expected[1]!r}, {note + ' ' + repr(expected[1])!r}")
    if not patched:
        return "\n".join([*lines, *(f"    {line}" for line in body)]) + "\n"
    # The modules the oracle patched, and those of TARGET (another implementation may live elsewhere).
    lines += [
        f"    clock = FakeClock({start!r})",
        f"    modules = [*time_modules(target), *map(importlib.import_module, {list(session.time.names)!r})]",
        "    patched = [(module, control_time(module, clock)) for module in dict.fromkeys(modules)]",
        "    try:",
        *(f"        {line}" for line in body),
        "    finally:",
        "        for module, replaced in reversed(patched):",
        "            for name, value in replaced.items():",
        "                setattr(module, name, value)",
    ]
    return "\n".join(lines) + "\n"


def render_program_repro(
    session: Session, target_path: str, steps: list[str], message: str, clauses: list[str]
) -> str:
    """A pytest file that replays Hypothesis's shrunk machine steps over the target, checking each step."""
    name = session.component.name
    first = message.splitlines()[0] if message else "the machine failed"
    about = [
        f"Breaks: {_clause_line(clauses)} (docs/SEMANTICS.md).",
        f"Divergence: {first}",
        "",
        "The machine of this project drives the target and the spec together (the target acts on a fake",
        "filesystem beside it), so the steps are the machine's.  Run with pytest;",
        "HICACHE_ORACLE_TARGET=package.module:Name runs them against another implementation.",
    ]
    machine_for = f"from {__package__} import machine_for"  # spec.oracle here, hicache_spec.oracle installed
    imports = "\n\n".join(["from __future__ import annotations", "import os", machine_for])
    lines = [
        *_opening(f"{name}, {len(steps)} machine steps.", target_path, about, imports),
        f"ADAPTER = {session.adapter.as_dict()!r}",
        "",
        "",
        f"def test_{name.replace('-', '_')}_follows_the_spec_{'_'.join(clauses) or 'invariants'}() -> None:",
        f"    state = machine_for({name!r}, TARGET, adapter=ADAPTER, declare={dict(session.declared)!r}"
        + (f", settings={session.settings!r}" if session.settings is not None else "")
        + ")()",
        "    state.check_step()",
    ]
    for step in steps:
        lines += [f"    {step}", "    state.check_step()"]
    lines.append("    state.teardown()")
    return "\n".join(lines) + "\n"
