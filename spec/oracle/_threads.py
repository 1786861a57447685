"""``--threads N`` (O6): real threads on the target, each history checked linearizable against the spec.

The mode over any component's world (:mod:`spec.oracle._worlds`): each history runs one seeded script per
worker thread on a fresh target under the oracle's scheduler (:mod:`spec.oracle._scheduler`, which holds
a thread inside its call while the others call, and whose locks stand in for the target's), and is
judged against the world's linearizability spec.  The interpreter's switch interval is raised for the
run, so between two points one thread runs.  The oracle never hangs: a call that does not return within
``call_timeout`` seconds (a deadlock, a spinning call) is a FAIL with every thread's stack.

Verdicts: an exception escaping a call is an M7 (C5) failure with its
traceback; a history that no order explains is one too, unless the same calls
made one at a time already diverge, in which case the sequential check names
the class's own clause (M7 is never blamed for what one thread shows).  The
budget counts histories and search steps; an exhausted search is UNKNOWN.
"""

from __future__ import annotations

import itertools
import random
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from .. import PACKAGE
from ..linearizability.checker import MAX_STEPS, PENDING, Operation, Raised, Verdict, check_history
from ..linearizability.metadata_cache import overlapping
from ..linearizability.scripts import Script
from ..world.clock import FakeClock
from ..world.filesystem import FakeFileSystem
from ._budgets import HISTORIES
from ._errors import OracleUsageError
from ._prepared import Prepared, prepared
from ._result import Failure, Found, OracleResult, failure_entry, unchecked_for_want
from ._scheduler import (
    Schedule,
    ScheduledClock,
    Scheduler,
    ThreadCallTimedOut,
    WorkerStopped,
    interpose_locks,
    lowest_parked,
    random_chooser,
)
from ._session import UNGUARDED, Session, TargetProxy
from ._time import restore, time_modules
from ._timeout import (  # the sequential runs' call guard's
    CALL_TIMEOUT,
    current_frames,
    stop_thread,
)
from ._worlds import START, THREADED_COMPONENTS, World, worlds

__all__ = [
    "CALL_TIMEOUT",
    "HISTORIES",
    "THREADED_COMPONENTS",
    "ThreadsBudget",
    "ThreadsResult",
    "ThreadsRun",
    "replay_threads",
    "run_history",
    "search_threads",
    "verify_control",
]

LENGTHS = (8,)  # calls per thread (a failure is then shrunk to the fewest calls that still show it)


_NOT_THE_TARGETS = tuple(
    f"{PACKAGE}.{name}" for name in ("oracle", "linearizability", "world.filesystem", "world.clock")
)


# the modules found for a session's target, found once per run (the session is the target's, not the mode's)
_LOCK_MODULES: weakref.WeakKeyDictionary[Session, list[ModuleType]] = weakref.WeakKeyDictionary()


def lock_modules(session: Session, world: World) -> list[ModuleType]:
    """The modules whose locks the target makes: those of its class (or factory) and its bases, and of
    the objects it keeps (two levels down), found on one instance built for the purpose; the oracle's
    own modules left out."""
    cached = _LOCK_MODULES.get(session)
    if cached is not None:
        return list(cached)
    config = world.configs(session)[0]
    clock = FakeClock(START)
    timed = "clock" in session.component.constructor
    obj = session.build(world.init(config, clock), clock if timed else None, UNGUARDED)
    found = [*time_modules(session.target), *time_modules(obj)]
    layer = [obj]
    for _ in range(2):
        kept = [v for o in layer for v in getattr(o, "__dict__", {}).values() if not isinstance(v, type)]
        found += [m for v in kept for m in time_modules(v)]
        layer = kept
    modules = [m for m in dict.fromkeys(found) if not m.__name__.startswith(_NOT_THE_TARGETS)]
    _LOCK_MODULES[session] = modules
    return list(modules)


# -- one history -----------------------------------------------------------------------------------


@dataclass
class ThreadsRun:
    """One recorded history: the operations, the schedule, and a call that never returned (with stacks)."""

    history: list[Operation]
    schedule: Schedule
    scripts: list[Script]
    config: dict[str, Any]
    timed_out: str = ""  # the call past its time, the calls in flight and every thread's stack
    workers: list[threading.Thread] = field(default_factory=list)


def _stacks(threads: Mapping[int, threading.Thread]) -> str:
    frames = current_frames()
    parts = []
    for index, thread in sorted(threads.items()):
        frame = frames.get(thread.ident or -1)
        stack = "    (ended)\n"
        if frame is not None:  # from the worker's call on (the thread's bootstrap left out)
            lines = traceback.format_stack(frame)
            start = next((i for i, line in enumerate(lines) if ", in worker\n" in line), 0)
            stack = "".join(lines[start:])
        parts.append(f"thread {index}:\n{stack}")
    return "".join(parts)


def run_history(
    session: Session,
    world: World,
    config: dict[str, Any],
    scripts: list[Script],
    choose: Callable[[list[int], int | None, str], int],
    *,
    replay: Sequence[int] = (),
    call_timeout: float = CALL_TIMEOUT,
) -> ThreadsRun:
    """Run one script per worker thread on a fresh target under a :class:`Scheduler`; the history."""
    clock = FakeClock(START)
    engine = session.probe.form == "engine"
    scheduler = Scheduler(len(scripts), choose, replay, native_calls_progress=engine)
    read = ScheduledClock(clock, scheduler)
    init = world.init(config, clock)
    fs = init.get("fs")
    if isinstance(fs, FakeFileSystem):
        fs.before = lambda op, path: scheduler.point(f"before {op} {path}")
        fs.after = lambda op, path: scheduler.point(f"after {op} {path}")
    has_clock = "clock" in session.component.constructor
    # The target's locks are the scheduler's for the whole run: made at construction or later in a call.
    patched = [(module, interpose_locks(module)) for module in lock_modules(session, world)]

    def unpatch() -> None:
        for module, replaced in reversed(patched):
            restore(module, replaced)

    try:
        obj = session.build(init, read if has_clock else None, UNGUARDED)
    except BaseException:
        unpatch()
        raise
    # The workers call the target themselves, under the scheduler's deadline (O8): no session's guard,
    # whose one worker thread would make every call.
    target = TargetProxy(session, obj, (), None, guard=UNGUARDED)

    perform = world.performer(session)

    def on_target(name: str, args: tuple[Any, ...]) -> Any:
        return target._call(name, args, {})

    stamps = itertools.count()
    history: list[Operation] = []
    in_flight: dict[int, tuple[str, tuple[Hashable, ...], float]] = {}

    def worker(index: int, script: Script) -> None:
        scheduler.enter(index)
        try:
            for name, args in script:
                scheduler.point("call")
                call = next(stamps)
                in_flight[index] = (name, args, time.monotonic())
                result: Any
                if name == "advance":
                    assert isinstance(args[0], float)
                    clock.now += args[0]
                    result = None
                else:
                    try:
                        result = perform(on_target, name, args)
                    except Exception as error:
                        result = Raised(type(error).__name__, traceback.format_exc())
                del in_flight[index]
                recorded = "len" if name == "__len__" else name
                history.append(Operation(index, recorded, args, result, call, next(stamps)))
        except WorkerStopped:
            pass  # past its call timeout: the run is over, its call stays in flight
        finally:
            scheduler.finished(index)

    threads = {i: threading.Thread(target=worker, args=(i, s), daemon=True) for i, s in enumerate(scripts)}
    run = ThreadsRun(history, scheduler.schedule, scripts, config, workers=list(threads.values()))

    def text(name: str, args: tuple[Hashable, ...]) -> str:
        return f"{name}({', '.join(map(repr, args))})"

    def flight() -> str:
        return ", ".join(f"t{i}: {text(n, a)}" for i, (n, a, _) in sorted(in_flight.items()))

    def deadline() -> None:
        now = time.monotonic()
        late = [(i, text(n, a)) for i, (n, a, since) in list(in_flight.items()) if now - since > call_timeout]
        if late:
            index, what = late[0]
            raise ThreadCallTimedOut(
                f"t{index}: {what} did not return within {call_timeout} s (calls in flight: {flight()})\n"
                + _stacks(threads)
            )

    old = sys.getswitchinterval()
    sys.setswitchinterval(1.0)  # threads switch only when one blocks: one runs between two points
    try:
        for index, thread in threads.items():
            thread.start()
            scheduler.idents[index] = thread.ident or -1
        scheduler.run(deadline)
    except ThreadCallTimedOut as late:
        run.timed_out = str(late)
        if "\n" not in run.timed_out:  # a deadlock the scheduler saw at once: the calls and the stacks
            run.timed_out += f" (calls in flight: {flight()})\n{_stacks(threads)}"
        scheduler.abort()
        for index, thread in threads.items():
            if index in in_flight:
                stop_thread(thread, WorkerStopped)  # a spin stops at its next bytecode
        for index, (name, args, _since) in list(in_flight.items()):
            history.append(Operation(index, name, args, PENDING, next(stamps), None))
    finally:
        sys.setswitchinterval(old)
        unpatch()
    for thread in threads.values():
        if not run.timed_out:
            thread.join()
    history.sort(key=lambda op: op.call)
    return run


# -- the search -----------------------------------------------------------------------------------


@dataclass
class FailingHistory:
    """A failing history and what it shows."""

    run: ThreadsRun
    kind: str  # "raised", "not linearizable", "timed out"
    verdict: Verdict | None = None
    detail: str = ""


@dataclass
class ThreadsFigures:
    histories: int = 0
    operations: int = 0
    overlapping: int = 0
    points: int = 0  # decisions of the scheduler
    search_steps: int = 0
    unknown: int = 0
    seconds: float = 0.0


def judge(run: ThreadsRun, spec: Any, max_steps: int) -> tuple[FailingHistory | None, Verdict | None]:
    """The failure a history shows (an exception, a call past its time, no order), or None; the verdict."""
    if run.timed_out:
        return FailingHistory(run, "timed out", detail=run.timed_out), None
    raised = next((op for op in run.history if isinstance(op.result, Raised)), None)
    if raised is not None:
        assert isinstance(raised.result, Raised)
        return FailingHistory(run, "raised", detail=f"{raised}\n{raised.result.detail}"), None
    verdict = check_history(run.history, spec, max_steps)
    if verdict.linearizable is False:
        return FailingHistory(run, "not linearizable", verdict), verdict
    return None, verdict


def search(
    session: Session,
    world: World,
    *,
    threads: int,
    histories: int,
    seed: int,
    max_steps: int,
    call_timeout: float,
) -> tuple[FailingHistory | None, ThreadsFigures]:
    """Run up to ``histories`` histories, their scripts growing through ``LENGTHS``; the first failure."""
    figures = ThreadsFigures()
    configs = world.configs(session)
    offered = frozenset(m for m in session.component.methods if session.offers(m))
    start = time.perf_counter()
    per_length = max(1, histories // len(LENGTHS))
    found: FailingHistory | None = None
    for number in range(histories):
        length = LENGTHS[min(number // per_length, len(LENGTHS) - 1)]
        rng = random.Random(seed * 1_000_003 + number)
        config = configs[number % len(configs)]
        scripts = world.scripts(rng, threads, length, config, offered)
        run = run_history(session, world, config, scripts, random_chooser(rng), call_timeout=call_timeout)
        failure, verdict = judge(run, world.spec(config, session), max_steps)
        figures.histories += 1
        figures.operations += len(run.history)
        figures.overlapping += overlapping(run.history)
        figures.points += len(run.schedule.picks)
        if verdict is not None:
            figures.search_steps += verdict.steps
            figures.unknown += verdict.linearizable is None
        if failure is not None:
            found = failure
            found.detail = found.detail or ""
            found.run.config = config
            _remember_seed(found, seed * 1_000_003 + number)
            break
    figures.seconds = round(time.perf_counter() - start, 2)
    return found, figures


def _remember_seed(found: FailingHistory, seed: int) -> None:
    found.run.config = {**found.run.config, "_seed": seed}


def usage_check(component: str, threads: int) -> None:
    if component not in THREADED_COMPONENTS:
        raise OracleUsageError(
            f"--threads: {component} is not checked under threads (only {', '.join(THREADED_COMPONENTS)}: "
            "the existence cache and the pool beliefs are used from one thread by design, E)"
        )
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 2:
        raise OracleUsageError(f"--threads must be an int >= 2, got {threads!r}")


def _shrink(
    session: Session, world: World, found: FailingHistory, *, max_steps: int, call_timeout: float, budget: int
) -> FailingHistory:
    """Drop calls one at a time while the failing schedule, or one of a few seeded others, still fails
    the same way (at most ``budget`` histories): the shortest history found."""
    best = found
    tries = 0
    seed = int(found.run.config.get("_seed", 0))
    config = {k: v for k, v in found.run.config.items() if k != "_seed"}
    changed = True
    while changed and tries < budget:
        changed = False
        for thread in range(len(best.run.scripts)):
            for position in range(len(best.run.scripts[thread]) - 1, -1, -1):
                scripts = [list(s) for s in best.run.scripts]
                del scripts[thread][position]
                if not any(scripts):
                    continue
                for attempt in range(6):
                    if tries >= budget:
                        return best
                    tries += 1
                    rng = random.Random(seed * 7919 + tries * 31 + attempt)
                    # First the failing schedule itself (a thread whose pick is gone is replaced by the
                    # lowest parked one), then fresh seeded schedules.
                    replay = best.run.schedule.picks if attempt == 0 else ()
                    run = run_history(
                        session,
                        world,
                        config,
                        scripts,
                        lowest_parked if attempt == 0 else random_chooser(rng),
                        replay=replay,
                        call_timeout=call_timeout,
                    )
                    failure, _ = judge(run, world.spec(config, session), max_steps)
                    if failure is not None and failure.kind == best.kind:
                        failure.run.config = {**config, "_seed": seed}
                        best, changed = failure, True
                        break
                if changed:
                    break
            if changed:
                break
    return best


def sequential_replay(
    session: Session, world: World, found: FailingHistory, *, max_steps: int, call_timeout: float
) -> FailingHistory | None:
    """The calls of the failing history made one at a time, in the order they were called, on a fresh
    target: the failure they show already (the class is wrong sequentially), or None."""
    calls: Script = [(op.name if op.name != "len" else "__len__", op.args) for op in found.run.history]
    config = {k: v for k, v in found.run.config.items() if k != "_seed"}
    run = run_history(session, world, config, [calls], lowest_parked, call_timeout=call_timeout)
    failure, _ = judge(run, world.spec(config, session), max_steps)
    return failure


# -- the run and its report ------------------------------------------------------------------------


def _call_text(op: Operation) -> str:
    if op.name == "advance":
        return f"(the clock moves by {op.args[0]})"
    args = ", ".join(repr(a) for a in op.args)
    result = "(never returned)" if op.ret is None else repr(op.result)
    return f"{op.name}({args}) -> {result}"


def render_history(found: FailingHistory) -> list[str]:
    """The history as calls per thread, each with its [call..return] stamps; the calls outside the longest
    prefix some order explains are marked."""
    explained = {id(op) for op in found.verdict.stuck} if found.verdict is not None else None
    lines = []
    for thread in sorted({op.thread for op in found.run.history}):
        lines.append(f"thread {thread}:")
        for op in (o for o in found.run.history if o.thread == thread):
            end = "..." if op.ret is None else int(op.ret)
            mark = "" if explained is None or id(op) in explained else "   <- no order explains it"
            lines.append(f"  {_call_text(op)}   [{int(op.call)}..{end}]{mark}")
    return lines


def render_repro(
    component: str, target_path: str, found: FailingHistory, clauses: list[str], session: Session
) -> str:
    config = {k: v for k, v in found.run.config.items() if k != "_seed"}
    scripts = [[(n, a) for n, a in s] for s in found.run.scripts]
    return "\n".join(
        [
            f'"""Reproduction: {target_path} as {component} under --threads {len(scripts)}'
            f" breaks {', '.join(clauses) or 'the spec'}.",
            "",
            "The scripts run on real threads under the oracle's scheduler, which picks the thread that",
            "goes on at each scheduling point (a clock reading, a filesystem call, a call's start) as the",
            "failing run did: the schedule.  The same history comes back and fails the same check.",
            '"""',
            "",
            f"from {__package__} import replay_threads",  # spec.oracle here, hicache_spec.oracle installed
            "",
            f"SCRIPTS = {scripts!r}",
            f"SCHEDULE = {found.run.schedule.picks!r}",
            "",
            "",
            "def test_the_threads_history_is_linearizable() -> None:",
            "    failure = replay_threads(",
            f"        {component!r},",
            f"        {target_path!r},",
            f"        config={config!r},",
            "        scripts=SCRIPTS,",
            "        schedule=SCHEDULE,",
            f"        declare={dict(session.declared)!r},",
            f"        adapter={session.adapter.as_dict()!r},",
            "    )",
            "    assert failure is None, failure",
            "",
        ]
    )


def torn(history: Sequence[Operation]) -> list[Operation]:
    """``history`` with every read batch of several keys (M9) made of its single ``contains``, each
    anywhere in the batch's interval (``contains_prefix(keys) -> n``: n hits, then the miss): the history
    of a cache whose read batches may tear and are otherwise right."""
    out: list[Operation] = []
    for op in history:
        keys = list(op.args)
        if op.name == "contains_many" and len(keys) > 1 and len(op.result) == len(keys):
            answers = zip(keys, op.result, strict=True)
            out += [Operation(op.thread, "contains", (k,), a, op.call, op.ret) for k, a in answers]
        elif op.name == "contains_prefix" and len(keys) > 1 and 0 < op.result <= len(keys):
            asked = keys[: op.result + 1]
            out += [
                Operation(op.thread, "contains", (k,), i < op.result, op.call, op.ret)
                for i, k in enumerate(asked)
            ]
        else:
            out.append(op)
    return out


def _clauses(world: World, found: FailingHistory, spec: Any, max_steps: int) -> list[str]:
    """M7 (C5); M9 first when some order explains the history once its batches may tear."""
    if found.verdict is not None and world.batches:
        relaxed = check_history(torn(found.run.history), spec, max_steps)
        if relaxed.linearizable:
            return ["M9", world.clause]
    return [world.clause]


def _one_at_a_time_clauses(session: Session, alone: FailingHistory) -> list[str]:
    """The clause of the call that diverges when the calls run one at a time: the first that raised, or
    that no order explains (its method's own clause; the component's constructor clause otherwise)."""
    history = alone.run.history
    explained = {id(op) for op in alone.verdict.stuck} if alone.verdict is not None else set()
    unexplained = alone.verdict is not None
    wrong = next(
        (op for op in history if isinstance(op.result, Raised) or (unexplained and id(op) not in explained)),
        None,
    )
    name = "__len__" if wrong is not None and wrong.name == "len" else wrong.name if wrong else ""
    own = session.component.method_clauses.get(name, ())
    return [own[0]] if own else [session.component.constructor_clause or "O5"]


def _message(world: World, found: FailingHistory, also: str = "") -> str:
    if found.kind == "timed out":
        head, _, stacks = found.detail.strip().partition("\n")
        return f"{world.clause}: a call never returned (a deadlock or a spin): {head}{also}\n{stacks}"
    if found.kind == "raised":
        return f"{world.clause}: an exception escaped a call under threads: {found.detail.strip()}"
    return f"{world.clause}: no order of the calls, respecting real time, gives these answers"


@dataclass
class ThreadsResult(OracleResult):
    """:class:`~spec.oracle.OracleResult` of ``--threads``: ``verdict`` is also ``"UNKNOWN"`` (exit 3);
    on FAIL, ``history`` is the failing history and ``unexplained`` the indices of its calls that no
    order explains (or that raised, or never returned), for ``--picture``."""

    history: list[Operation] = field(default_factory=list, repr=False, compare=False)
    unexplained: set[int] = field(default_factory=set, repr=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        out = super().as_dict()
        out.pop("history", None)
        out.pop("unexplained", None)
        return out

    def picture_history(self) -> tuple[list[Operation], set[int]]:
        return self.history, self.unexplained

    def instants(self) -> list[float]:
        """Where the clock moved (its ``advance`` calls), on the history's time axis."""
        return [op.call for op in self.history if op.name == "advance"]


def _unexplained(found: FailingHistory) -> set[int]:
    history = found.run.history
    if found.kind == "not linearizable" and found.verdict is not None:
        explained = {id(op) for op in found.verdict.stuck}
        return {i for i, op in enumerate(history) if id(op) not in explained}
    return {i for i, op in enumerate(history) if op.ret is None or isinstance(op.result, Raised)}


@dataclass(frozen=True)
class ThreadsBudget:
    """How long a threads search runs: ``histories`` histories of ``threads`` real threads, each judged
    within ``max_steps`` search steps, a call past ``call_timeout`` seconds failing it, and a failure shrunk
    within ``shrink_budget`` histories; ``seed`` fixes the scripts and the schedules.  OracleUsageError for
    a component not checked under threads or a bad figure (before anything is prepared)."""

    component: str
    threads: int = 4
    seed: int = 0
    histories: int = HISTORIES
    max_steps: int = MAX_STEPS
    call_timeout: float = CALL_TIMEOUT
    shrink_budget: int = 300

    def __post_init__(self) -> None:
        usage_check(self.component, self.threads)
        for name, value in (("histories", self.histories), ("max_steps", self.max_steps)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise OracleUsageError(f"{name} must be an int >= 1, got {value!r}")
        if not self.call_timeout > 0:
            raise OracleUsageError(f"call_timeout must be > 0, got {self.call_timeout!r}")


ONE_AT_A_TIME = "(threads run: the sequential clauses; run without --threads for them)"


def search_threads(run: Prepared, budget: ThreadsBudget) -> Found:
    """``--threads`` over a prepared target: the histories, the first failing one shrunk and explained, and
    what this mode judged (O8: its clause, M9 too with batches; the sequential clauses are the sequential
    run's, which --strict does not count here, as that run does not count M7).  When the failing history's
    calls, made one at a time, already diverge, the outcome says so (``alone``): the run's path then asks
    the sequential search for the class's own clause, and reports this failure only if it finds none."""
    component, session, target_path = run.component, run.session, run.target_path
    world = worlds()[component.name]
    steps, timeout = budget.max_steps, budget.call_timeout
    failing, figures = search(
        session,
        world,
        threads=budget.threads,
        histories=budget.histories,
        seed=budget.seed,
        max_steps=steps,
        call_timeout=timeout,
    )
    failures: list[Failure] = []
    alone = False
    if failing is not None:
        note = also = ""
        replayed = sequential_replay(session, world, failing, max_steps=steps, call_timeout=timeout)
        if replayed is not None and replayed.kind != "timed out":
            alone = (
                True  # wrong one call at a time: the class's own clause, if the sequential search finds it
            )
            note = " (the same calls one at a time diverge too; the sequential check found no clause)"
        elif replayed is not None:  # a call never returns, one at a time too: a spin, M7 (C5) under threads
            also = " The same calls made one at a time never return either: not a race."
        elif failing.kind != "timed out":
            failing = _shrink(
                session, world, failing, max_steps=steps, call_timeout=timeout, budget=budget.shrink_budget
            )
        config = {k: v for k, v in failing.run.config.items() if k != "_seed"}
        # O10: a failure carries its clauses in every mode; the same calls one at a time diverging,
        # the clause of the call that diverged then, never the thread-safety clause
        clauses = (
            _one_at_a_time_clauses(session, replayed)
            if alone and replayed is not None
            else _clauses(world, failing, world.spec(config, session), steps)
        )
        lines = render_history(failing)
        repro = render_repro(component.name, target_path, failing, clauses, session)
        calls = sum(op.name != "advance" for op in failing.run.history)
        message = _message(world, failing, also) + note
        failures.append(failure_entry(clauses, message, calls, lines, repro))
    covered: dict[str, Any] = {
        "threads": budget.threads,
        "histories": figures.histories,
        "operations": figures.operations,
        "overlapping": figures.overlapping,
        "scheduling_decisions": figures.points,
        "search_steps": figures.search_steps,
        "unknown": figures.unknown,
        "seconds": figures.seconds,
    }
    batches = any(session.offers(b) for b in world.batches)  # O10: called in this run
    mine = [world.clause, *(["M9"] if batches else [])]
    checked = component.checked_clauses(session.declared)
    unchecked = unchecked_for_want(component, session.left_out)
    not_checked = {c: ONE_AT_A_TIME for c in checked if c not in mine and c not in unchecked}
    excused = frozenset(not_checked)
    unknown = ""
    if not failures and figures.unknown:
        unknown = (
            f"{figures.unknown} of {figures.histories} histories exhausted the search budget of"
            f" {steps} steps each: not checked, never passed"
        )
        exhausted = f"({figures.unknown} of {figures.histories} histories exhausted the search budget)"
        not_checked.update(dict.fromkeys(mine, exhausted))
    details = (
        {}
        if failing is None
        else {"history": list(failing.run.history), "unexplained": _unexplained(failing)}
    )
    return Found(
        covered,
        failures,
        not_checked=not_checked,
        judged=mine if not failures and not unknown else [],
        excused=excused,
        unknown=unknown,
        report=ThreadsResult,
        details=details,
        alone=alone,
    )


def verify_control(run: Prepared, found: Found) -> None:
    """O4 under threads: the target read the clock the oracle holds it at, and used only the fake disk."""
    session, histories = run.session, int(found.figures["histories"])
    if session.time_control != "none" and histories and not session.holder.reads:
        raise OracleUsageError(
            "the target never read the clock the oracle controls under --threads: it reads the time some "
            "other way, so the oracle can neither hold it there nor run it on the fake clock. Give it a "
            'clock parameter, e.g. --adapter \'{"arguments": {"__init__": {"clock": "its_name"}}}\''
        )
    session.fs_control.verify(histories)


def replay_threads(
    component: str,
    target: str | Callable[..., Any],
    *,
    config: Mapping[str, Any],
    scripts: Sequence[Sequence[tuple[str, Sequence[Hashable]]]],
    schedule: Sequence[int],
    declare: Mapping[str, str] | None = None,
    adapter: Any = None,
    max_steps: int = MAX_STEPS,
    call_timeout: float = CALL_TIMEOUT,
) -> str | None:
    """Run ``scripts`` on ``target`` following ``schedule`` (a reproduction's); the failure, or None."""
    world = worlds()[component]
    with prepared(component, target, adapter=adapter, declare=declare) as ready:
        session = ready.session
        plain = [[(str(n), tuple(a)) for n, a in s] for s in scripts]
        history = run_history(
            session, world, dict(config), plain, lowest_parked, replay=schedule, call_timeout=call_timeout
        )
        found, _ = judge(history, world.spec(dict(config), session), max_steps)
        if found is None:
            return None
        return "\n".join([_message(world, found), *render_history(found)])
