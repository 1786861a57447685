"""The sequential search of the oracle: the component's machine over the target, one call at a time.

Hypothesis runs the project's own lock-step machine in chunks of examples, each chunk with its own
seed, until the budget (examples, seconds) is spent.  A failure is shrunk (by Hypothesis, then by the
oracle: calls, or machine steps), explained (its clause, its counterexample, its reproduction) and its
clause's group set aside, so that the search goes on for the others (O2).  What it found goes to
``_result.build_result`` as a :class:`~spec.oracle._result.Found`, once :func:`verify_control` has checked
what the target read (O4).
"""

from __future__ import annotations

import copy
import inspect
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, Phase, reject, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import HypothesisException, Unsatisfiable

from ..conformance.clauses import CLAUSE_ID
from ..machines._base import Figures, LockstepMachine, run_machine
from . import _repro
from ._bad_settings import try_bad_settings
from ._components import Component
from ._errors import OracleUsageError
from ._provenance import made_by
from ._result import Failure, Found, failure_entry
from ._session import ConstructorRefused, Recording, Replay, Session, _repr, minimize, replay
from ._timeout import CallTimedOut

if TYPE_CHECKING:
    from ._prepared import Prepared

__all__ = ["SearchBudget", "clauses_of", "machine_class", "search_sequential", "verify_control"]

CHUNK = 50  # examples per Hypothesis run (each with its own derived seed)
PROGRESS_AFTER = 3.0  # seconds before the first progress line
PROGRESS_EVERY = 1.0  # seconds between progress lines
MAX_FAILURES = 8  # clauses set aside in one run at most


@dataclass(frozen=True)
class SearchBudget:
    """How long a sequential search runs: at most ``max_examples`` examples of at most ``steps`` steps,
    starting no example after ``seconds`` (read on ``clock``); ``progress`` receives a line about once a
    second after the first few seconds; ``every_clause`` goes on after a failure with its group set aside
    (O2).  ``seed`` fixes the examples."""

    seed: int = 0
    max_examples: int = 500
    steps: int = 40
    seconds: float | None = None
    progress: Callable[[str], None] | None = None
    clock: Callable[[], float] = time.perf_counter
    every_clause: bool = True

    def __post_init__(self) -> None:
        for name, value in (("max_examples", self.max_examples), ("steps", self.steps)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise OracleUsageError(f"{name} must be an int >= 1, got {value!r}")
        if self.seconds is not None and not self.seconds > 0:
            raise OracleUsageError(f"seconds must be > 0, got {self.seconds!r}")


class _OutOfTime(KeyboardInterrupt):
    """Raised at the start of an example once the run's ``seconds`` have passed; ``check`` stops on it.
    An interruption: the one exception Hypothesis lets through at once, without taking it for the
    test's failure and replaying it (any other, even a bare BaseException, is replayed)."""


class _ShrunkEnough(KeyboardInterrupt):
    """Raised at the start of an example once Hypothesis has run ``SHRINK_EXAMPLES`` to shrink a failure:
    the oracle reports the last failing one (Hypothesis's shortest so far)."""


# Hypothesis's shrinker gets this many examples per failure: unbounded it ran up to 1,500 (20 s for one
# file-store failure) and tripled the catalogue's time (302 s against 92 s) for no shorter counterexample;
# the oracle's own pass (calls, or machine steps) then finishes the job in milliseconds.  The clause is
# the shrunk example's: at 100 a metadata example kept a boundary query or a re-add that the call pass
# then removed, and its label with it, so the cheap machines (M, E, P) get 300.
SHRINK_EXAMPLES = 300
SHRINK_EXAMPLES_FILES = 100  # the file components' machines: each example is dear


@dataclass
class RunBudget:
    """The run's time budget and progress line, consulted at the start of every example.

    ``clock`` is the clock they read (``time.perf_counter``; tests pass a fake
    one), ``figures`` what the run covered so far (for the progress line).
    """

    seconds: float | None
    progress: Callable[[str], None] | None
    clock: Callable[[], float]
    figures: Callable[[], Figures]
    shrink_examples: int = SHRINK_EXAMPLES
    shrinking: bool = False  # an example of this Hypothesis run failed: what follows is its shrinking
    shrinks: int = 0  # the examples Hypothesis has run to shrink it
    # The last failing example: the error, the calls the target received, the machine steps (recorded
    # while shrinking), the clause of the step it ended in; ``complete`` once the steps are in it.
    last_failure: tuple[BaseException, Recording | None, list[Step], str] | None = None
    complete: bool = False

    def __post_init__(self) -> None:
        self.start = self.last_report = self.clock()

    def elapsed(self) -> float:
        return self.clock() - self.start

    def out_of_time(self, elapsed: float) -> bool:
        return self.seconds is not None and elapsed >= self.seconds

    def example_started(self) -> None:
        """Raise _OutOfTime once the budget is spent; print a progress line now and then."""
        if self.shrinking:  # a failure found in time is shrunk and reported in full
            self.shrinks += 1
            if self.shrinks > self.shrink_examples and self.complete:
                raise _ShrunkEnough
            return
        now = self.clock()
        elapsed = now - self.start
        if self.out_of_time(elapsed):
            raise _OutOfTime
        if self.progress is not None and elapsed > PROGRESS_AFTER and now - self.last_report > PROGRESS_EVERY:
            self.last_report = now
            f = self.figures().as_dict()
            self.progress(
                f"oracle: {f['examples']} examples, {f['steps']} steps, "
                f"{f['distinct_states']} states, {round(elapsed, 1)} s"
            )


Step = tuple[str, dict[str, Any]]


@dataclass
class SearchState:
    """What the sequential search learns as it runs, owned by it (the session is the target's, fixed once
    prepared): the clauses and groups it reported failing (O2, O8: a later divergence of one of them ends
    its example unreported; a group among them is set aside, not its rules), the clause of the machine
    step a failing example ended in (when the machine says), and that example's machine steps (V, F)."""

    reported: set[str] = field(default_factory=set)
    step_clause: str = ""
    steps: list[Step] = field(default_factory=list)
    # O2: the groups set aside after their failure, with why (their rules and examples are skipped from
    # then on), and the recording of the example being run (``Session.factory_for`` writes it)
    set_aside: dict[str, str] = field(default_factory=dict)
    recording: Recording | None = None

    def set_group_aside(self, group: str) -> None:
        """O2: ``group`` failed; the search goes on without its rules to look for the other clauses."""
        self.reported.add(group)
        self.set_aside[group] = f"{group}: set aside after its failure, to look for the others"

    def skipped(self, session: Session) -> frozenset[str]:
        """What the machine does not call: what ``session`` leaves out and what this search set aside."""
        return frozenset({*session.left_out, *self.set_aside})


_NOT_RULES = frozenset({"check_step", "abstract_state", "teardown"})


def _rule_codes(base: type[LockstepMachine]) -> dict[Any, str]:
    """The code of each of the machine's own public functions (its rules), by name."""
    codes: dict[Any, str] = {}
    for klass in base.__mro__[: base.__mro__.index(LockstepMachine)]:
        for name, value in vars(klass).items():
            function = inspect.unwrap(value) if callable(value) else None
            if inspect.isfunction(function) and not name.startswith("_") and name not in _NOT_RULES:
                codes.setdefault(function.__code__, name)
    return codes


# --settings: the file-store machine's build parameters and the settings that override them
_PINNED_BUILD = {
    "cap": "max_size",
    "ratio": "eviction_ratio",
    "min_free": "min_free_space",
    "metadata": "enable_metadata_cache",
    "ttl": "metadata_ttl",
}


def _record_steps(
    codes: dict[Any, str], steps: list[Step], pinned: Mapping[str, Any] | None = None
) -> Callable[[], None]:
    """Record, as (rule, arguments), each call of one of ``codes`` made while no other is running: the
    steps Hypothesis runs (a rule that calls another is one step).  Returns the function that stops.
    ``pinned`` (``--settings``): a ``build`` is recorded with the values the store was built with, not
    the ones drawn (the reproduction pins them too)."""
    running: list[Any] = []
    previous = sys.getprofile()

    def profile(frame: Any, event: str, _arg: Any) -> None:
        if event == "call" and not running and frame.f_code in codes:
            code = frame.f_code
            names = code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount]
            arguments = {n: copy.deepcopy(frame.f_locals[n]) for n in names}
            if pinned is not None and codes[code] == "build":
                arguments |= {n: pinned[s] for n, s in _PINNED_BUILD.items() if n in arguments}
            steps.append((codes[code], arguments))
            running.append(frame)
        elif event == "return" and running and frame is running[0]:
            running.clear()

    sys.setprofile(profile)
    return lambda: sys.setprofile(previous)


def machine_class(
    component: Component, session: Session, budget: RunBudget | None = None, state: SearchState | None = None
) -> type[LockstepMachine]:
    """The component's own machine, subclassed over the session's factory and declared choices, minus the
    rules of left-out operations; ``budget`` is consulted at the start of every example (before the machine
    is built), and told when one fails: the examples Hypothesis runs to shrink it are not counted in the
    figures.  While Hypothesis replays a failure, the machine's steps are recorded in ``state.steps``."""
    state = SearchState() if state is None else state
    base = component.machine()
    if session.probe.form == "engine":  # O12: the engine's page names and its one-bool batch_set
        from ._engine import ENGINE_FOREIGN, ENGINE_NAMESPACE

        engine = {"namespace": ENGINE_NAMESPACE, "foreign": ENGINE_FOREIGN, "one_bool_batches": True}
        base = type(base.__name__, (base,), {**engine, "__module__": base.__module__})
    codes = _rule_codes(base)
    rules = set(codes.values())
    # A group set aside after its failure whose rules other clauses need keeps them (O8): its divergences
    # are set aside instead, at teardown.
    kept = state.reported & set(component.shared_rules)
    hidden = {
        rule: None
        for group in state.skipped(session)
        if group not in kept
        for rule in (*component.rules_for.get(group, {group} & rules), *component.groups.get(group, ()))
    }
    stop: list[Callable[[], None]] = []  # what to undo at teardown: the recording of steps,
    interposed: list[Callable[[], None]] = []  # and, after the machine's own, the interposition

    def __init__(self: LockstepMachine) -> None:
        if budget is not None:
            budget.example_started()
        # O4: an interposed filesystem is in the target's modules until teardown (check() interposes it
        # for the whole run, so that this is a no-op there; machine_for's machines need it).
        if session.fs_control.mode == "interposed":
            interposed.append(session.patch())
        base.__init__(self)
        # M8: counters that never move are a failure, not a cache without them
        if session.counting(state.set_aside):
            self.counting = True  # type: ignore[attr-defined]
        if budget is not None and _shrinking_another_clause(budget, session):
            # B1's bad inputs are no part of the failure under shrinking: its examples take the step
            # without the calls (the same draws, the same rules: every example replays as it ran).
            self.skip_bad_inputs = True
        if budget is not None and budget.shrinking and not component.replayable:
            state.steps = []
            stop.append(_record_steps(codes, state.steps, session.settings))

    def teardown(self: LockstepMachine) -> None:
        state.step_clause = getattr(self, "clause", "")  # for a failure that names no clause
        while stop:
            stop.pop()()
        if budget is not None and budget.shrinking:
            self._seen = Figures()  # not an example of the budget: Hypothesis shrinking a failure
        ending = sys.exc_info()[1]  # teardown runs in Hypothesis's ``finally``: what ends the example
        diverged = None if isinstance(ending, HypothesisException) else ending
        diverged = diverged if isinstance(diverged, Exception) else None
        # Its clause, or the clause whose divergence the example let pass before (the machine's absorbed).
        clauses = {_clause_of(diverged, state), self.absorbed} if diverged is not None else set()
        known = bool(clauses & state.reported)
        if known:
            self._seen = Figures()  # an example Hypothesis does not count: it is rejected below
        try:
            base.teardown(self)
        finally:
            while interposed:
                interposed.pop()()
        if known:  # O2, O8: a divergence of a clause already reported ends the example, unreported
            reject()
        if diverged is not None and budget is not None:
            budget.last_failure = (diverged, state.recording, state.steps, state.step_clause)
            budget.complete = component.replayable or budget.shrinking
            budget.shrinking = True

    members: dict[str, Any] = {
        **hidden,
        "__init__": __init__,
        "teardown": teardown,
        "set_aside": state.skipped(session),
    }
    if session.settings is not None:  # --settings: FileStoreMachine.pinned overrides what build draws
        members["pinned"] = dict(session.settings)
    over = base.over(session.factory_for(state), **session.declared)
    return type(f"Oracle{base.__name__}", (over,), members)


def _shrinking_another_clause(budget: RunBudget, session: Session) -> bool:
    """Whether Hypothesis is shrinking a failure of another clause than B1 (bad input)."""
    if not budget.shrinking or budget.last_failure is None:
        return False
    error, _recording, _steps, step_clause = budget.last_failure
    return (clauses_of(str(error)) or [step_clause])[0] != "B1"


def search_sequential(run: Prepared, budget: SearchBudget) -> Found:
    """Run the component's machine over the prepared target until ``budget`` is spent; every failing
    clause (O2), each shrunk and explained."""
    component, session = run.component, run.session
    totals = Figures()
    shrinks = SHRINK_EXAMPLES if component.replayable else SHRINK_EXAMPLES_FILES
    machine: type[LockstepMachine]

    def so_far() -> Figures:  # totals and machine change as the search runs
        return _plus(totals, machine.figures)

    found = Found({})
    state = SearchState()  # the search's own: what it reported, and a failing example's steps
    stop = ""  # why the search ended before its budget was spent
    # B1 of the constructor first (milliseconds, before the budget's clock starts): a run that stops at its
    # first failure stops there; otherwise B1 is set aside and the search looks for the others (O2).
    if "B1" in component.groups and "B1" not in session.left_out:
        _try_bad_settings(run, found, totals, state)
        if found.failures and not budget.every_clause:
            stop = "it stops at the first failure (B1; every_clause=False)"
    examples = RunBudget(budget.seconds, budget.progress, budget.clock, so_far, shrinks)
    machine = machine_class(component, session, examples, state)
    done = 0
    while not stop and done < budget.max_examples and not examples.out_of_time(examples.elapsed()):
        failure: BaseException | None = None
        chunk = min(CHUNK, budget.max_examples - done)
        run_settings = settings(
            max_examples=chunk,
            stateful_step_count=budget.steps,
            deadline=None,
            database=None,
            derandomize=False,
            report_multiple_bugs=False,
            print_blob=False,
            phases=(Phase.generate, Phase.shrink),
            suppress_health_check=list(HealthCheck),
        )
        machine = hypothesis_seed(budget.seed * 1_000_003 + done // CHUNK)(machine)  # each chunk its own seed
        examples.shrinking, examples.shrinks, examples.complete, examples.last_failure = False, 0, False, None
        try:
            run_machine(machine, run_settings)
        except Unsatisfiable:  # every example of the chunk met a divergence already reported
            stop = "every example met a divergence already reported"
            break
        except HypothesisException as error:
            raise OracleUsageError(f"the machine could not run the target: {error}") from None
        except OracleUsageError:  # a method that does not take the component's call (O5): exit 2
            raise
        except _OutOfTime:  # the budget is spent: stop with the figures so far
            break
        except CallTimedOut as late:  # O8: a call that never returned ends the run, never hangs it
            failure = late
        except (Exception, _ShrunkEnough) as error:  # the machine's verdict: a divergence to report
            failure = error
            if examples.last_failure is not None:  # the example Hypothesis shrank it to
                failure, state.recording, state.steps, state.step_clause = examples.last_failure
        finally:
            totals = _plus(totals, machine.figures)
            machine.figures = Figures()  # counted: so_far() must not add them twice
            done += chunk
        if isinstance(failure, CallTimedOut):
            found.failures.append(_explain_timeout(session, state, failure))
            found.errors.append(failure)
            stop = f"a call did not return within {failure.timeout:g} s"
            break
        if failure is not None:
            try:
                explained = _explain(session, state, failure, run.target_path)
            except CallTimedOut as late:  # the failure's replay did not return
                found.failures.append(_explain_timeout(session, state, late))
                found.errors.append(late)
                stop = f"a call did not return within {late.timeout:g} s"
                break
            clause = (explained.clauses or ["the target's own invariants"])[0]
            if any(f.clauses[:1] == explained.clauses[:1] for f in found.failures):
                stop = f"{clause} failed again through rules outside its group"  # reported once
                break
            found.failures.append(explained)
            found.errors.append(failure)
            state.reported.add(clause)
            # O2: set the failing clause's group aside and go on looking for the others.
            aside = next((c for c in explained.clauses if c in component.groups), "")
            stop = _why_stop(budget, clause, aside, state.skipped(session), len(found.failures))
            if stop:
                break
            state.set_group_aside(aside)
            machine = machine_class(component, session, examples, state)
    totals.seconds = examples.elapsed()
    found.figures = totals.as_dict()
    found.bad_inputs = sorted(totals.bad_inputs)
    found.set_aside = frozenset(state.reported)
    found.left_out = dict(state.set_aside)
    # O8: what this search could not check, and what did not get its budget.
    found.not_checked.update(dict.fromkeys(component.threads_clauses, "(sequential run; use --threads)"))
    if stop:
        ran = f"{totals.examples} of {budget.max_examples} examples"
        found.stopped = f"(the search stopped after {ran}: {stop})"
    verify_control(run, found, state.recording)
    return found


def _try_bad_settings(run: Prepared, found: Found, totals: Figures, state: SearchState) -> None:
    """B1 of the constructor, before the search: each bad setting through the target's constructor form
    (spec/oracle/_bad_settings.py); a setting let through is B1's failure, and B1 is then set aside."""
    session = run.session
    tried = try_bad_settings(session, run.target_path)
    totals.bad_inputs |= set(tried.tried)
    found.bad_inputs_not_tried.update(tried.not_tried)
    if tried.failure is not None:
        found.failures.append(tried.failure)
        found.errors.append(AssertionError(tried.failure.message))
        state.set_group_aside("B1")


def _why_stop(budget: SearchBudget, clause: str, aside: str, skipped: frozenset[str], failures: int) -> str:
    """Why the search ends at ``clause``'s failure (O8: the clauses not yet failed are then not checked),
    or "" when it goes on with ``aside`` set aside (O2)."""
    if not budget.every_clause:
        return f"it stops at the first failure ({clause}; every_clause=False)"
    if not aside:
        return f"{clause} failed, and no group of its rules can be set aside to look for the others"
    if aside in skipped:
        return f"{clause} failed, though its group {aside} was already set aside"
    if failures >= MAX_FAILURES:
        return f"{failures} clauses failed, the most one run reports"
    return ""


def _plus(a: Figures, b: Figures) -> Figures:
    states, bad = a.states | b.states, a.bad_inputs | b.bad_inputs
    return Figures(a.examples + b.examples, a.checks + b.checks, states, bad_inputs=bad)


def _explain_timeout(session: Session, state: SearchState, late: CallTimedOut) -> Failure:
    """O8: a call that did not return is a FAIL of the clause of the rule that made it: the machine's step
    clause where it names one, else the rule's (``Component.rule_clauses``, its group), else the
    constructor's; the counterexample is the example's calls up to it, the stacks every thread's."""
    component, recording = session.component, state.recording
    rule = next(
        (
            frame.f_code.co_name
            for frame, _line in traceback.walk_tb(late.__traceback__)
            if isinstance(frame.f_locals.get("self"), LockstepMachine)
            and not frame.f_code.co_name.startswith("_")
            and frame.f_code.co_name not in _NOT_RULES
        ),
        "",
    )
    group = next((clause for clause, rules in component.groups.items() if rule in rules), "")
    clause = state.step_clause or component.rule_clauses.get(rule) or group
    lines = [f"{late.call}  # did not return"]
    if recording is not None:
        timed = recording.start is not None
        built = f"cache = {session.constructor_text(recording.init, timed)}"
        if late.call == session.constructor_text(recording.init, timed):
            clause = clause or component.constructor_clause
            lines = [f"{built}  # did not return"]
        else:
            calls = _repro.render_calls(session, recording.calls, recording.start)
            lines = [built, *calls[:-1], f"{calls[-1]}  # did not return"] if calls else [built, *lines]
    message = f"{type(late).__name__}: {late}; no reproduction is written (it would hang)"
    entry = failure_entry([clause] if clause else [], message, max(len(lines) - 1, 1), lines, "")
    entry.stacks = late.stacks
    return entry


def _explain_refusal(refused: ConstructorRefused, target_path: str) -> Failure:
    """O5: a constructor that refuses an argument the spec allows FAILs the constructor clause."""
    repro = _repro.render_refusal_repro(refused.clause, refused.call, target_path)
    message = f"{refused.call} raised {refused.error}; the spec allows these arguments"
    return failure_entry([refused.clause], message, 1, [f"cache = {refused.call}"], repro)


def _clause_of(failure: BaseException, state: SearchState) -> str:
    """The clause a failure is reported under: the first its message names, else the step's."""
    return (clauses_of(str(failure)) or [state.step_clause])[0]


def clauses_of(message: str) -> list[str]:
    """The clauses an assertion names before its first colon (``"M3: contains('a')"``): the one way a
    failure is attributed."""
    head, sep, _rest = message.partition(":")
    return list(dict.fromkeys(CLAUSE_ID.findall(head))) if sep else []


def _minimize_steps(machine: type[LockstepMachine], steps: list[Step], failure: BaseException) -> list[Step]:
    """Drop machine steps one at a time while the machine still fails with the same clause (the
    initialization stays).  After Hypothesis's bounded shrinking it cuts the catalogue's file-component
    counterexamples from a mean of 4.2 steps (max 13) to 2.4 (max 6), as short as unbounded shrinking
    makes them in a third of the time."""
    want = (type(failure), clauses_of(str(failure)))

    def fails(candidate: list[Step]) -> bool:
        state = machine()
        try:
            state.check_step()
            for name, kwargs in candidate:
                getattr(state, name)(**copy.deepcopy(kwargs))
                state.check_step()
        except Exception as error:  # the machine's verdict, whatever it raises
            return (type(error), clauses_of(str(error))) == want
        finally:
            state.teardown()
        return False

    for index in range(len(steps) - 1, 0, -1):  # steps[0] is the initialization
        candidate = steps[:index] + steps[index + 1 :]
        if fails(candidate):
            steps = candidate
    return steps


def _explain(session: Session, state: SearchState, failure: BaseException, target_path: str) -> Failure:
    """The clauses, the calls and the reproduction of a failure."""
    if isinstance(failure, ConstructorRefused):
        return _explain_refusal(failure, target_path)
    machine_message = f"{type(failure).__name__}: {failure}".strip()
    # A target's own exception names no clause: the step's, where the machine says which it checks.
    clauses = clauses_of(str(failure)) or [c for c in [state.step_clause] if c]
    if not session.component.replayable:  # a machine acting on a world beside the target: its steps
        steps = _minimize_steps(machine_class(session.component, session, state=state), state.steps, failure)
        lines = [f"state.{name}({', '.join(f'{k}={_repr(v)}' for k, v in kw.items())})" for name, kw in steps]
        repro = _repro.render_program_repro(session, target_path, lines, machine_message, clauses)
        count = sum(name != "build" for name, _ in steps)
        return failure_entry(clauses, machine_message, count, lines, repro)
    recording = state.recording
    if recording is None:
        message = f"the machine failed before building the target: {machine_message}"
        return failure_entry(clauses, message, 0, [], "")
    # Hypothesis shrinks machine steps; one step may make several calls (``contains_every_key``), and a
    # call may be needed by no later answer: cutting the calls down one at a time shortens the
    # catalogue's counterexamples even after unbounded shrinking (M/E/P: mean 4.4 calls to 2.6, max 11 to 5).
    replayed = minimize(session, recording)
    if replayed is None:  # the machine saw something the replay does not (an answer compared otherwise)
        message = f"{machine_message} (not reproduced by replaying the calls alone)"
        calls = _repro.render_calls(session, recording.calls, recording.start)
        return failure_entry(clauses, message, 0, calls, "")
    # The counterexample, replayed once more on a fresh target: the last one built, and it received
    # exactly the calls printed (O1).
    replayed = replay(session, recording, replayed.calls)
    lines = [
        *_repro.render_opening(session, recording, target_path),
        *_repro.render_calls(session, replayed.calls, recording.start, _repro.call_notes(replayed)),
    ]
    inferred, others, made = False, list[str](), list[str]()
    if "snapshot" in session.component.optional_methods and "snapshot" in session.left_out:
        made = made_by(session, recording, replayed)  # O11: the rules whose wrong form explains it
        clauses, others = _inferred_blame(session.component, replayed, clauses, made)
        inferred = True
    repro = _repro.render_repro(session, replayed, recording, target_path, clauses)
    message = _repro.divergence(session, replayed)
    count = len(replayed.calls)
    return failure_entry(
        clauses, message, count, lines, repro, inferred=inferred, consistent_with=others, provenance=made
    )


def _inferred_blame(
    component: Component, replayed: Replay, named: list[str], made: Sequence[str] = ()
) -> tuple[list[str], list[str]]:
    """Without a snapshot() the state is never compared, only answers.  The clauses to blame are first
    those of the rules that made the state the diverging answer reads (``made``: O11, the rules whose
    known wrong form gives every recorded answer, :mod:`spec.oracle._provenance`), then that of the
    operation whose answer diverged first (the replay's last call), the machine's own clause where it is
    one of that operation's (the boundary of M2 seen by contains, say).  The counterexample is consistent
    with the clauses of every operation in it too (a contains that does not refresh recency shows as a
    later contains_all's wrong answer: E3 blamed by provenance, E4 next, E2 among the others).  Returns
    the clauses to blame and the others, in the component's order."""
    diverged = component.method_clauses.get(replayed.calls[-1].method, ())
    if not diverged:
        return list(dict.fromkeys([*made, *named])), []
    if "B1" in component.groups:  # bad input: every method's, when the machine named it (a refusal)
        diverged = (*diverged, "B1")
    answered = [next((c for c in named if c in diverged), diverged[0])]
    answered += [c for c in named if c in diverged and c not in answered]
    blamed = list(dict.fromkeys([*made, *answered]))
    order = {c: i for i, c in enumerate(component.clauses)}
    methods = [m for call in replayed.calls for m in (call.method, *(m for m, _ in call.receiver))]
    own = {component.method_clauses[m][0] for m in methods if component.method_clauses.get(m)}
    others = (own | set(named)) - set(blamed)  # each operation's own clause, and what the machine said
    return blamed, sorted(others, key=lambda c: (order.get(c, len(order)), c))


def verify_control(run: Prepared, found: Found, last: Recording | None) -> None:
    """O4 of a sequential run, before its report: the target read the clock the oracle controls (the time
    half) and only the filesystem it interposed (the filesystem half, ``_fs.py``); the figures then count
    the target's filesystem calls and clock readings.  ``last``: the recording of the search's last
    example (a failure's, when it failed)."""
    session = run.session
    examples = int(found.figures["examples"])
    _verify_time(session, last, found.errors[0] if found.errors else None, examples)
    refusals_only = bool(found.failures) and all(f.clauses[:1] == ["B1"] for f in found.failures)
    session.fs_control.verify(examples, not refusals_only)
    if session.fs_control.mode != "none":
        found.figures["fs_calls"] = session.fs_control.calls()
    if session.time_control != "none":
        found.figures["clock_reads"] = session.holder.reads


def _verify_time(
    session: Session, recording: Recording | None, failure: BaseException | None, examples: int
) -> None:
    """O4: the report says the target ran on the fake clock only if it read it.  A time-dependent
    component whose target never read the clock the oracle passed or patched in, over a whole run, ran
    on another clock (a default bound at import, a clock kept in a class attribute): a usage error."""
    component = session.component
    timeless = "clock" not in component.constructor or not component.replayable or examples == 0
    if timeless or session.holder.reads or isinstance(failure, ConstructorRefused):
        return
    if failure and recording and all(c.now == recording.start for c in recording.calls):
        return  # a divergence before the clock ever moved: no answer in it depends on the time
    how = (
        f"passed as {session.adapter.keyword_of('__init__', 'clock')}="
        if session.time_control == "injected"
        else "patched into its modules"
    )
    raise OracleUsageError(
        f"the target never read the clock the oracle controls ({how}) in {examples} examples: "
        "it reads the time some other way (a default bound at import, a clock kept elsewhere), so a "
        "verdict would be one on the real clock. Give it a clock parameter and map it with an adapter, e.g. "
        '--adapter \'{"arguments": {"__init__": {"clock": "its_name"}}}\''
    )
