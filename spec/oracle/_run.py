"""``check()``: run a component's machine over a target and report PASS or FAIL with a reproduction."""

from __future__ import annotations

import copy
import importlib
import inspect
import logging
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, fields
from functools import reduce
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import HypothesisException

from spec.clauses import CLAUSE_ID
from spec.machines._base import Figures, LockstepMachine, run_machine
from spec.oracle import _repro
from spec.oracle._adapter import Adapter
from spec.oracle._components import COMPONENTS, Component
from spec.oracle._errors import OracleUsageError, one_line
from spec.oracle._session import ConstructorRefused, Recording, Session, _repr, minimize, replay

__all__ = ["OracleResult", "OracleUsageError", "check", "load_target", "machine_for"]

CHUNK = 50  # examples per Hypothesis run (each with its own derived seed)
PROGRESS_AFTER = 3.0  # seconds before the first progress line
PROGRESS_EVERY = 1.0  # seconds between progress lines


@dataclass
class OracleResult:
    """What a run of the oracle found.

    ``verdict`` is ``"PASS"`` or ``"FAIL"``; ``figures`` the examples, steps,
    distinct states and seconds covered; ``left_out`` the clause groups the
    target does not implement (not checked); ``time_control`` how the oracle
    controlled the target's time; ``declared`` the design choices the run
    followed (O3: ``{"eviction": "birth"}``, the defaults unless declared).
    On FAIL: ``clauses`` (the broken clause IDs, most specific first),
    ``message`` (the divergence), ``counterexample`` (the shrunk calls in the
    target's API) and ``repro`` (a pytest file).
    """

    component: str
    target: str
    verdict: str
    seed: int
    figures: dict[str, float]
    time_control: str
    left_out: dict[str, str]
    adapter: dict[str, Any]
    declared: dict[str, str] = field(default_factory=dict)
    fs_control: str = ""  # O4: how the oracle controlled the target's filesystem (file components)
    clauses: list[str] = field(default_factory=list)
    message: str = ""
    counterexample: list[str] = field(default_factory=list)
    calls: int = 0  # the number of calls in the counterexample (clock moves not counted)
    repro: str = ""
    # O2: every failing clause, each with its own counterexample (the fields above are the first's)
    failures: list[dict[str, Any]] = field(default_factory=list)
    passed_clauses: list[str] = field(default_factory=list)
    failure: BaseException | None = field(default=None, repr=False, compare=False)

    @property
    def passed(self) -> bool:
        return self.verdict == "PASS"

    def failure_dict(self) -> dict[str, Any]:
        return _failure(self.clauses, self.message, self.calls, self.counterexample, self.repro)

    def as_dict(self) -> dict[str, Any]:
        out = {
            f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("failure", "passed_clauses")
        }
        out["passed"] = self.passed_clauses
        return out

    def summary(self) -> str:
        """A human-readable report (what the CLI prints without ``--json``)."""
        f = self.figures
        lines = [
            f"{self.verdict}: {self.target} as {self.component}",
            f"  examples {f['examples']}, steps {f['steps']}, distinct states {f['distinct_states']},"
            f" {f['seconds']} s (seed {self.seed})",
            f"  time: {self.time_control}",
        ]
        if self.fs_control:
            lines.append(f"  filesystem: {self.fs_control}")
        if self.declared:
            lines.append(f"  declared: {', '.join(f'{k}={v}' for k, v in self.declared.items())}")
        lines += [f"  left out: {why}" for why in self.left_out.values()]
        for failure in self.failures or ([self.failure_dict()] if not self.passed else []):
            calls = failure["calls"]
            broken = ", ".join(failure["clauses"]) or "the target's own invariants"
            lines.append(f"  breaks: {broken}")
            lines.append(f"  divergence: {failure['message']}")
            lines.append(f"  counterexample ({calls} call{'' if calls == 1 else 's'}):")
            lines += [f"    {line}" for line in failure["counterexample"]]
        if self.passed_clauses:
            lines.append(f"  passed: {', '.join(self.passed_clauses)}")
        return "\n".join(lines)


def load_target(path: str) -> Callable[..., Any]:
    """Import ``package.module:Name`` (``Name`` may be dotted); OracleUsageError with a clear message."""
    module_name, sep, name = path.partition(":")
    if not sep or not module_name or not name:
        raise OracleUsageError(
            f"target must look like package.module:Class or package.module:factory, got {path!r}"
        )
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # whatever the module raises on import (SyntaxError, ...) is a usage error
        raise OracleUsageError(
            f"cannot import module {module_name!r} of target {path!r}: {one_line(error)}"
        ) from None
    try:
        obj = reduce(getattr, name.split("."), module)
    except AttributeError:
        message = f"module {module_name!r} has no attribute {name!r} (target {path!r})"
        raise OracleUsageError(message) from None
    if not callable(obj):
        raise OracleUsageError(f"target {path!r} is {type(obj).__name__}, not a class or a factory")
    return obj


def _path_of(target: Callable[..., Any]) -> str:
    module = getattr(target, "__module__", None)
    name = getattr(target, "__qualname__", None)
    return f"{module}:{name}" if module and name and "<" not in name else repr(target)


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


def _record_steps(codes: dict[Any, str], steps: list[Step]) -> Callable[[], None]:
    """Record, as (rule, arguments), each call of one of ``codes`` made while no other is running: the
    steps Hypothesis runs (a rule that calls another is one step).  Returns the function that stops."""
    running: list[Any] = []
    previous = sys.getprofile()

    def profile(frame: Any, event: str, _arg: Any) -> None:
        if event == "call" and not running and frame.f_code in codes:
            code = frame.f_code
            names = code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount]
            steps.append((codes[code], {n: copy.deepcopy(frame.f_locals[n]) for n in names}))
            running.append(frame)
        elif event == "return" and running and frame is running[0]:
            running.clear()

    sys.setprofile(profile)
    return lambda: sys.setprofile(previous)


def _machine_class(
    component: Component, session: Session, budget: RunBudget | None = None
) -> type[LockstepMachine]:
    """The component's own machine over the session's factory, minus the rules of left-out operations;
    ``budget`` is consulted at the start of every example (before the machine is built), and told when
    one fails: the examples Hypothesis runs to shrink it are not counted in the figures.  While
    Hypothesis replays a failure, the machine's steps are recorded in ``session.steps``."""
    base: type[LockstepMachine] = component.machine()(session.factory, **session.declared)
    codes = _rule_codes(base)
    rules = set(codes.values())
    hidden = {
        rule: None
        for group in session.left_out
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
        if budget is not None and budget.shrinking and not component.replayable:
            session.steps = []
            stop.append(_record_steps(codes, session.steps))

    def teardown(self: LockstepMachine) -> None:
        session.step_clause = getattr(self, "clause", "")  # for a failure that names no clause
        while stop:
            stop.pop()()
        if budget is not None and budget.shrinking:
            self._seen = Figures()  # not an example of the budget: Hypothesis shrinking a failure
        ending = sys.exc_info()[1]  # teardown runs in Hypothesis's ``finally``: what ends the example
        try:
            base.teardown(self)
        finally:
            while interposed:
                interposed.pop()()
        if isinstance(ending, Exception) and not isinstance(ending, HypothesisException) and budget:
            budget.last_failure = (ending, session.recording, session.steps, session.step_clause)
            budget.complete = component.replayable or budget.shrinking
            budget.shrinking = True

    members = {**hidden, "__init__": __init__, "teardown": teardown, "set_aside": frozenset(session.left_out)}
    return type(f"Oracle{base.__name__}", (base,), members)


def _prepare(
    component: str,
    target: str | Callable[..., Any],
    adapter: Adapter | Mapping[str, Any] | None,
    declare: Mapping[str, str] | None = None,
) -> tuple[Component, Session, str]:
    if component not in COMPONENTS:
        raise OracleUsageError(f"unknown component {component!r}; known: {', '.join(COMPONENTS)}")
    if not isinstance(adapter, Adapter):
        try:
            adapter = Adapter.from_dict(adapter or {})
        except (TypeError, ValueError) as error:
            raise OracleUsageError(f"bad adapter: {error}") from None
    target_path = target if isinstance(target, str) else _path_of(target)
    target_obj = load_target(target) if isinstance(target, str) else target
    if not callable(target_obj):
        raise OracleUsageError(f"target {target_path} is not callable")
    spec_component = COMPONENTS[component]
    target_obj = spec_component.wrapped(target_obj)  # the project's own evictor behind SEMANTICS V's factory
    session = Session(spec_component, target_obj, adapter)  # probes the target: OracleUsageError if unusable
    session.declare(declare or {})
    return spec_component, session, target_path


def machine_for(
    component: str,
    target: str | Callable[..., Any],
    *,
    adapter: Adapter | Mapping[str, Any] | None = None,
    declare: Mapping[str, str] | None = None,
) -> type[LockstepMachine]:
    """The machine class the oracle runs for ``target``: the component's own machine over the adapted
    target, following the declared choices.  Reproduction files of the file components drive it step
    by step."""
    spec_component, session, _path = _prepare(component, target, adapter, declare)
    return _machine_class(spec_component, session)


def check(
    component: str,
    target: str | Callable[..., Any],
    *,
    seed: int = 0,
    max_examples: int = 500,  # the CLI's default too
    steps: int = 40,
    seconds: float | None = None,
    adapter: Adapter | Mapping[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
    run_clock: Callable[[], float] = time.perf_counter,
    leave_out: Sequence[str] = (),
    every_clause: bool = True,
    declare: Mapping[str, str] | None = None,
) -> OracleResult:
    """Check ``target`` against the spec of ``component`` with the project's own lock-step machine.

    ``target`` is an import path (``package.module:Class``) or the class/factory
    itself, called like the spec's constructor (through ``adapter``).  Runs at
    most ``max_examples`` examples of at most ``steps`` steps, starting no
    example after ``seconds`` (the run ends with the figures so far);
    deterministic for a given ``seed`` and budget.  ``progress`` receives a
    line about once a second after the first few seconds; ``run_clock`` is the
    clock the budget and the progress line read (tests pass a fake one).  The
    targets' WARNING log lines (a file store's, say) are silenced for the run.
    Raises :class:`OracleUsageError` when the run cannot start.  ``leave_out`` sets clause groups aside
    (``--leave-out``); ``every_clause`` (default) goes on after a failure with its group set aside (O2).
    ``declare`` names the target's design choices (O3, ``--declare``: ``{"eviction": "lru"}`` for a
    metadata cache that evicts the least recently used, M6-lru); the spec follows them.

    >>> from spec.metadata_cache import MetadataCacheSpec
    >>> check("metadata-cache", MetadataCacheSpec, max_examples=5, steps=5).verdict
    'PASS'
    """
    for name, value in (("max_examples", max_examples), ("steps", steps)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise OracleUsageError(f"{name} must be an int >= 1, got {value!r}")
    if seconds is not None and not seconds > 0:
        raise OracleUsageError(f"seconds must be > 0, got {seconds!r}")
    with ExitStack() as cleanup:
        # The file components' targets log every file they cannot remove; the oracle's faults make many.
        cleanup.callback(logging.disable, logging.root.manager.disable)
        logging.disable(logging.WARNING)
        spec_component, session, target_path = _prepare(component, target, adapter, declare)
        for group in leave_out:
            if group not in spec_component.groups:
                known = ", ".join(sorted(spec_component.groups)) or "none"
                raise OracleUsageError(f"--leave-out {group}: not a group of {component} (groups: {known})")
            session.left_out[group] = f"{group}: left out on request (--leave-out)"
        totals = Figures()
        shrinks = SHRINK_EXAMPLES if spec_component.replayable else SHRINK_EXAMPLES_FILES
        budget = RunBudget(seconds, progress, run_clock, lambda: _plus(totals, machine.figures), shrinks)
        machine = _machine_class(spec_component, session, budget)
        failures: list[dict[str, Any]] = []  # each failure as OracleResult.failure_dict() gives it
        errors: list[BaseException] = []
        cleanup.callback(session.patch())
        done = 0
        while done < max_examples and not budget.out_of_time(budget.elapsed()):
            failure: BaseException | None = None
            budget_examples = min(CHUNK, max_examples - done)
            run_settings = settings(
                max_examples=budget_examples,
                stateful_step_count=steps,
                deadline=None,
                database=None,
                derandomize=False,
                report_multiple_bugs=False,
                print_blob=False,
                phases=(Phase.generate, Phase.shrink),
                suppress_health_check=list(HealthCheck),
            )
            machine = hypothesis_seed(seed * 1_000_003 + done // CHUNK)(machine)  # each chunk its own seed
            budget.shrinking, budget.shrinks, budget.complete, budget.last_failure = False, 0, False, None
            try:
                run_machine(machine, run_settings)
            except HypothesisException as error:
                raise OracleUsageError(f"the machine could not run the target: {error}") from None
            except OracleUsageError:  # a method that does not take the component's call (O5): exit 2
                raise
            except _OutOfTime:  # the budget is spent: stop with the figures so far
                break
            except (Exception, _ShrunkEnough) as error:  # the machine's verdict: a divergence to report
                failure = error
                if budget.last_failure is not None:  # the example Hypothesis shrank it to
                    failure, session.recording, session.steps, session.step_clause = budget.last_failure
            finally:
                totals = _plus(totals, machine.figures)
                machine.figures = Figures()  # counted: so_far() must not add them twice
                done += budget_examples
            if failure is not None:
                found = _explain(session, failure, target_path)
                if any(f["clauses"][:1] == found["clauses"][:1] for f in failures):
                    break  # its clause failed again through rules outside its group: reported once
                failures.append(found)
                errors.append(failure)
                # O2: set the failing clause's group aside and go on looking for the others.
                aside = next((c for c in found["clauses"] if c in spec_component.groups), "")
                if not every_clause or aside in ("", *session.left_out) or len(failures) >= MAX_FAILURES:
                    break
                session.left_out[aside] = f"{aside}: set aside after its failure, to look for the others"
                machine = _machine_class(spec_component, session, budget)
        totals.seconds = budget.elapsed()
        _verify_time(session, errors[0] if errors else None, totals)
        session.fs_control.verify(totals.examples)  # O4, the filesystem half (spec/oracle/_fs.py)
        covered = totals.as_dict()
        if session.fs_control.mode != "none":
            covered["fs_calls"] = session.fs_control.calls()
        if session.time_control != "none":
            covered["clock_reads"] = session.holder.reads
        result = OracleResult(
            component=spec_component.name,
            target=target_path,
            verdict="FAIL" if failures else "PASS",
            seed=seed,
            figures=covered,
            time_control=session.describe_time(),
            left_out=dict(session.left_out),
            adapter=session.adapter.as_dict(),
            declared=dict(session.declared),
            fs_control="" if session.fs_control.mode == "none" else session.fs_control.describe(),
            **(failures[0] if failures else {}),
            failures=failures,
            failure=errors[0] if errors else None,
        )
        failed = {c for f in failures for c in f["clauses"]}
        not_run = {c for why in session.left_out.values() for c in CLAUSE_ID.findall(why.split(":", 1)[0])}
        not_run |= {d for c in not_run for d in spec_component.depends.get(c, ())}
        result.passed_clauses = [c for c in spec_component.clauses if c not in failed | not_run]
        return result


MAX_FAILURES = 8  # clauses set aside in one run at most


def _plus(a: Figures, b: Figures) -> Figures:
    return Figures(a.examples + b.examples, a.checks + b.checks, a.states | b.states)


def _verify_time(session: Session, failure: BaseException | None, totals: Figures) -> None:
    """O4: the report says the target ran on the fake clock only if it read it.  A time-dependent
    component whose target never read the clock the oracle passed or patched in, over a whole run, ran
    on another clock (a default bound at import, a clock kept in a class attribute): a usage error."""
    component, recording = session.component, session.recording
    timeless = "clock" not in component.constructor or not component.replayable or totals.examples == 0
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
        f"the target never read the clock the oracle controls ({how}) in {totals.examples} examples: "
        "it reads the time some other way (a default bound at import, a clock kept elsewhere), so a "
        "verdict would be one on the real clock. Give it a clock parameter and map it with an adapter, e.g. "
        '--adapter \'{"arguments": {"__init__": {"clock": "its_name"}}}\''
    )


def _explain_refusal(refused: ConstructorRefused, target_path: str) -> dict[str, Any]:
    """O5: a constructor that refuses an argument the spec allows FAILs the constructor clause."""
    repro = _repro.render_refusal_repro(refused.clause, refused.call, target_path)
    message = f"{refused.call} raised {refused.error}; the spec allows these arguments"
    return _failure([refused.clause], message, 1, [f"cache = {refused.call}"], repro)


def _failure(clauses: list[str], message: str, calls: int, lines: list[str], repro: str) -> dict[str, Any]:
    return {"clauses": clauses, "message": message, "calls": calls, "counterexample": lines, "repro": repro}


def clauses_of(message: str) -> list[str]:
    """The clauses an assertion names before its first colon (``"M3: contains('a')"``): the one way a
    failure is attributed."""
    head, sep, _rest = message.partition(":")
    return list(dict.fromkeys(CLAUSE_ID.findall(head))) if sep else []


def _minimize_steps(machine: type[LockstepMachine], steps: list[Step], failure: BaseException) -> list[Step]:
    """Drop machine steps one at a time while the machine still fails with the same clause (the
    initialization stays).  After Hypothesis's bounded shrinking it cuts the catalogue's file-component
    counterexamples from a mean of 4.2 steps (max 13) to 2.4 (max 6), as short as unbounded shrinking
    makes them in a third of the time (issue 11 item 7)."""
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


def _explain(session: Session, failure: BaseException, target_path: str) -> dict[str, Any]:
    """The clauses, the calls and the reproduction of a failure."""
    if isinstance(failure, ConstructorRefused):
        return _explain_refusal(failure, target_path)
    machine_message = f"{type(failure).__name__}: {failure}".strip()
    # A target's own exception names no clause: the step's, where the machine says which it checks.
    clauses = clauses_of(str(failure)) or [c for c in [session.step_clause] if c]
    if not session.component.replayable:  # a machine acting on a world beside the target: its steps
        steps = _minimize_steps(_machine_class(session.component, session), session.steps, failure)
        lines = [f"state.{name}({', '.join(f'{k}={_repr(v)}' for k, v in kw.items())})" for name, kw in steps]
        repro = _repro.render_program_repro(session, target_path, lines, machine_message, clauses)
        return _failure(clauses, machine_message, sum(name != "build" for name, _ in steps), lines, repro)
    recording = session.recording
    if recording is None:
        message = f"the machine failed before building the target: {machine_message}"
        return _failure(clauses, message, 0, [], "")
    # Hypothesis shrinks machine steps; one step may make several calls (``contains_every_key``), and a
    # call may be needed by no later answer: cutting the calls down one at a time shortens the
    # catalogue's counterexamples even after unbounded shrinking (issue 11 item 7: M/E/P, mean 4.4 calls
    # to 2.6, max 11 to 5).
    replayed = minimize(session, recording)
    if replayed is None:  # the machine saw something the replay does not (an answer compared otherwise)
        message = f"{machine_message} (not reproduced by replaying the calls alone)"
        calls = _repro.render_calls(session, recording.calls, recording.start)
        return _failure(clauses, message, 0, calls, "")
    # The counterexample, replayed once more on a fresh target: the last one built, and it received
    # exactly the calls printed (O1).
    replayed = replay(session, recording, replayed.calls)
    lines = _repro.render_calls(session, replayed.calls, recording.start)
    repro = _repro.render_repro(session, replayed, recording, target_path, clauses)
    return _failure(clauses, _repro.divergence(session, replayed), len(replayed.calls), lines, repro)
