"""``check()``: run a component's machine over a target and report PASS or FAIL with a reproduction."""

from __future__ import annotations

import ast
import importlib
import inspect
import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis.errors import HypothesisException
from hypothesis.reporting import with_reporter

from spec.machines._base import Figures, LockstepMachine, replaying_a_failure, run_machine
from spec.oracle._adapter import Adapter
from spec.oracle._components import COMPONENTS, Component
from spec.oracle._errors import OracleUsageError, one_line
from spec.oracle._repro import render_call, render_calls, render_program_repro, render_repro
from spec.oracle._session import ConstructorRefused, OneShot, Recording, Replay, Session, minimize, replay
from spec.oracle._time import FakeClock

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
        return {
            "clauses": self.clauses,
            "message": self.message,
            "calls": self.calls,
            "counterexample": self.counterexample,
            "repro": self.repro,
        }

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
        obj: Any = importlib.import_module(module_name)
    except Exception as error:  # whatever the module raises on import (SyntaxError, ...) is a usage error
        raise OracleUsageError(
            f"cannot import module {module_name!r} of target {path!r}: {one_line(error)}"
        ) from None
    for part in name.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise OracleUsageError(
                f"module {module_name!r} has no attribute {name!r} (target {path!r})"
            ) from None
    if not callable(obj):
        raise OracleUsageError(f"target {path!r} is {type(obj).__name__}, not a class or a factory")
    return obj  # type: ignore[no-any-return]


def _path_of(target: Callable[..., Any]) -> str:
    module = getattr(target, "__module__", None)
    name = getattr(target, "__qualname__", None)
    return f"{module}:{name}" if module and name and "<" not in name else repr(target)


class _OutOfTime(KeyboardInterrupt):
    """Raised at the start of an example once the run's ``seconds`` have passed; ``check`` stops on it.
    An interruption: the one exception Hypothesis lets through at once, without taking it for the
    test's failure and replaying it (any other, even a bare BaseException, is replayed)."""


class RunBudget:
    """The run's time budget and progress line, consulted at the start of every example.

    ``clock`` is the clock they read (``time.perf_counter``; tests pass a fake
    one), ``figures`` what the run covered so far (for the progress line).
    """

    def __init__(
        self,
        seconds: float | None,
        progress: Callable[[str], None] | None,
        clock: Callable[[], float],
        figures: Callable[[], Figures],
    ) -> None:
        self.seconds = seconds
        self.progress = progress
        self.clock = clock
        self.figures = figures
        self.start = clock()
        self.last_report = self.start
        self.active = True  # off once the run is over (minimizing a failure builds machines too)

    def elapsed(self) -> float:
        return self.clock() - self.start

    def out_of_time(self, elapsed: float) -> bool:
        return self.seconds is not None and elapsed >= self.seconds

    def example_started(self) -> None:
        """Raise _OutOfTime once the budget is spent; print a progress line now and then."""
        if not self.active or replaying_a_failure():  # a failure found in time is reported in full
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


def _machine_class(
    component: Component, session: Session, on_example: Callable[[], None] | None = None
) -> type[LockstepMachine]:
    """The component's own machine over the session's factory, minus the rules of left-out operations;
    ``on_example`` is called at the start of every example (before the machine is built)."""
    try:
        build = component.machine()
    except ImportError as error:
        raise OracleUsageError(
            f"component {component.name!r} has no machine in this tree yet: {error}"
        ) from None
    base: type[LockstepMachine] = build(session.factory, **session.declared)
    hidden = {
        rule: None
        for group in session.left_out
        for rule in (*component.rules_for.get(group, ()), *component.groups.get(group, ()))
    }

    def check_step(self: LockstepMachine) -> None:
        session.current_model = getattr(self, component.model_attribute, None)
        base.check_step(self)

    def __init__(self: LockstepMachine) -> None:
        if on_example is not None:
            on_example()
        base.__init__(self)

    members = {
        **hidden,
        "check_step": check_step,
        "__init__": __init__,
        "set_aside": frozenset(session.left_out),
    }
    return type(f"Oracle{base.__name__}", (base,), members)


def _prepare(
    component: str,
    target: str | Callable[..., Any],
    adapter: Adapter | Mapping[str, Any] | None,
    declare: Mapping[str, str] | None = None,
) -> tuple[Component, Session, str]:
    if component not in COMPONENTS:
        raise OracleUsageError(f"unknown component {component!r}; known: {', '.join(COMPONENTS)}")
    if adapter is None:
        adapter = Adapter()
    elif not isinstance(adapter, Adapter):
        try:
            adapter = Adapter.from_dict(adapter)
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
    machine = _machine_class(spec_component, session)
    if session.fs_control.mode != "interposed":
        return machine

    class Interposed(machine):  # type: ignore[valid-type,misc]
        """O4: the fake filesystem is interposed in the target's modules from __init__ to teardown."""

        def __init__(self) -> None:
            self._undo_interposition = session.patch()
            super().__init__()

        def teardown(self) -> None:
            try:
                super().teardown()
            finally:
                self._undo_interposition()

    return Interposed


def check(
    component: str,
    target: str | Callable[..., Any],
    *,
    seed: int = 0,
    max_examples: int = 300,
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
    previous_disable = logging.root.manager.disable
    # The file components' targets log every file they cannot remove; the oracle's faults make many.
    logging.disable(logging.WARNING)
    try:
        return _check(
            component,
            target,
            seed,
            max_examples,
            steps,
            seconds,
            adapter,
            progress,
            run_clock,
            leave_out,
            every_clause,
            declare,
        )
    finally:
        logging.disable(previous_disable)


def _check(
    component: str,
    target: str | Callable[..., Any],
    seed: int,
    max_examples: int,
    steps: int,
    seconds: float | None,
    adapter: Adapter | Mapping[str, Any] | None,
    progress: Callable[[str], None] | None,
    run_clock: Callable[[], float],
    leave_out: Sequence[str] = (),
    every_clause: bool = True,
    declare: Mapping[str, str] | None = None,
) -> OracleResult:
    spec_component, session, target_path = _prepare(component, target, adapter, declare)
    for group in leave_out:
        if group not in spec_component.groups:
            known = ", ".join(spec_component.groups) or "none"
            raise OracleUsageError(f"--leave-out {group}: not a group of {component} (groups: {known})")
        session.left_out[group] = f"{group}: left out on request (--leave-out)"
    totals = Figures()

    def so_far() -> Figures:
        current = machine.figures
        return Figures(
            totals.examples + current.examples, totals.checks + current.checks, totals.states | current.states
        )

    budget = RunBudget(seconds, progress, run_clock, so_far)
    machine = _machine_class(spec_component, session, budget.example_started)
    failures: list[OracleResult] = []
    program: list[object] = []  # what Hypothesis reports: the failing example as machine steps
    undo = session.patch()
    try:
        done = 0
        chunk_index = 0
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
                # The oracle minimizes a failing example itself (call by call, or machine step by step):
                # bounded and faster than Hypothesis's shrinker on these machines.
                phases=(Phase.generate,),
                suppress_health_check=list(HealthCheck),
            )
            machine._hypothesis_internal_use_seed = seed * 1_000_003 + chunk_index  # type: ignore[attr-defined,unused-ignore]
            out_of_time = False
            try:
                program.clear()
                with with_reporter(program.append):
                    figures = run_machine(machine, run_settings)
            except HypothesisException as error:
                raise OracleUsageError(f"the machine could not run the target: {error}") from None
            except OracleUsageError:  # a method that does not take the component's call (O5): exit 2
                raise
            except _OutOfTime:  # the budget is spent: stop with the figures so far
                out_of_time = True
                figures = machine.figures
            except Exception as error:  # the machine's verdict: any exception is a divergence to report
                failure = error
                figures = machine.figures
            totals.examples += figures.examples
            totals.checks += figures.checks
            totals.states |= figures.states
            machine.figures = Figures()  # counted: so_far() must not add them twice
            done += budget_examples
            chunk_index += 1
            if out_of_time:
                break
            if failure is not None:
                found = _found(spec_component, session, target_path, seed, failure, program)
                if any(f.clauses[:1] == found.clauses[:1] for f in failures):
                    break  # its clause failed again through rules outside its group: reported once
                failures.append(found)
                # O2: set the failing clause's group aside and go on looking for the others.
                aside = next((c for c in found.clauses if c in spec_component.groups), None)
                if (
                    not every_clause
                    or aside is None
                    or aside in session.left_out
                    or len(failures) >= MAX_FAILURES
                ):
                    break
                session.left_out[aside] = f"{aside}: set aside after its failure, to look for the others"
                session.set_aside.add(aside)
                machine = _machine_class(spec_component, session, budget.example_started)
        budget.active = False
        totals.seconds = budget.elapsed()
        _verify_time(session, failures[0].failure if failures else None, totals)
        session.fs_control.verify(totals.examples)  # O4, the filesystem half (spec/oracle/_fs.py)
        result = _found(spec_component, session, target_path, seed, None, [])
        result.figures = totals.as_dict()
        if session.fs_control.mode != "none":
            result.figures["fs_calls"] = session.fs_control.calls()
        if session.time_control != "none":
            result.figures["clock_reads"] = session.holder.reads
        if failures:
            first = failures[0]
            result.verdict = "FAIL"
            result.clauses, result.message = first.clauses, first.message
            result.counterexample, result.calls, result.repro = first.counterexample, first.calls, first.repro
            result.failures = [f.failure_dict() for f in failures]
        failed = {c for f in failures for c in f.clauses}
        not_run = {c for why in session.left_out.values() for c in CLAUSE_ID.findall(why.split(":", 1)[0])}
        not_run |= {d for c in not_run for d in spec_component.depends.get(c, ())}
        result.passed_clauses = [c for c in spec_component.clauses if c not in failed | not_run]
        return result
    finally:
        budget.active = False
        undo()


MAX_FAILURES = 8  # clauses set aside in one run at most


def _found(
    component: Component,
    session: Session,
    target_path: str,
    seed: int,
    failure: BaseException | None,
    program: list[object],
) -> OracleResult:
    """The report of one failure (or, with ``failure`` None, the frame of the run's report)."""
    result = OracleResult(
        component=component.name,
        target=target_path,
        verdict="PASS" if failure is None else "FAIL",
        seed=seed,
        figures={},
        time_control=session.describe_time(),
        left_out=dict(session.left_out),
        adapter=session.adapter.as_dict(),
        declared=dict(session.declared),
        fs_control="" if session.fs_control.mode == "none" else session.fs_control.describe(),
    )
    if failure is not None:
        result.failure = failure
        _explain(result, session, failure, target_path, program)
    return result


def _verify_time(session: Session, failure: BaseException | None, totals: Figures) -> None:
    """O4: the report says the target ran on the fake clock only if it read it.  A time-dependent
    component whose target never read the clock the oracle passed or patched in, over a whole run, ran
    on another clock (a default bound at import, a clock kept in a class attribute): a usage error."""
    component = session.component
    if "clock" not in component.constructor or not component.replayable or totals.examples == 0:
        return
    if session.holder.reads or isinstance(failure, ConstructorRefused):
        return
    recording = session.recording
    if (
        failure is not None
        and recording is not None
        and all(c.now == recording.start for c in recording.calls)
    ):
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


def _explain_refusal(result: OracleResult, refused: ConstructorRefused, target_path: str) -> None:
    """O5: a constructor that refuses an argument the spec allows FAILs the constructor clause."""
    result.clauses = [refused.clause]
    result.message = f"{refused.call} raised {refused.error}; the spec allows these arguments"
    result.counterexample = [f"cache = {refused.call}"]
    result.calls = 1
    timed = "clock = FakeClock(1000.0)\n    " if "clock" in refused.call else ""
    result.repro = (
        f'"""Reproduction from the HiCache regression oracle: the constructor refuses arguments that '
        f'{refused.clause} allows.\n\nTarget: {target_path}\n"""\n\n'
        "import importlib\nimport os\n\n"
        f"TARGET = os.environ.get('HICACHE_ORACLE_TARGET', {target_path!r})\n\n\n"
        + (inspect.getsource(FakeClock) + "\n\n" if timed else "")
        + f"def test_the_constructor_takes_what_{refused.clause}_allows() -> None:\n"
        "    module, _, name = TARGET.partition(':')\n"
        "    target = importlib.import_module(module)\n"
        "    for part in name.split('.'):\n"
        "        target = getattr(target, part)\n"
        f"    {timed}{refused.call}\n"
    )


CLAUSE_ID = re.compile(r"\b([MEPFVCBS][1-9])\b")


def _explain_program(
    result: OracleResult,
    session: Session,
    failure: BaseException,
    target_path: str,
    program: list[object],
) -> None:
    """A failure of a machine that acts on a world beside the target: Hypothesis's shrunk steps."""
    lines = [line.strip() for item in program for line in str(item).splitlines()]
    if not any(line.startswith("state.") for line in lines):
        lines = [
            line.strip() for note in getattr(failure, "__notes__", ()) for line in str(note).splitlines()
        ]
    internal = ("state.teardown()", "state._after_every_step()")  # the repro checks after every step itself
    steps = [line for line in lines if line.startswith("state.") and line not in internal]
    steps = _minimize_steps(_machine_class(session.component, session), steps, failure)
    message = f"{type(failure).__name__}: {failure}".strip()
    result.message = message
    result.counterexample = steps
    result.calls = sum(not step.startswith("state.build(") for step in steps)
    rules = [step[len("state.") :].split("(", 1)[0] for step in reversed(steps)]
    by_rule = [session.component.rule_clauses[r] for r in rules if r in session.component.rule_clauses]
    result.clauses = list(dict.fromkeys([*CLAUSE_ID.findall(message), *by_rule]))
    result.repro = render_program_repro(session, target_path, steps, message, result.clauses)


Step = tuple[str, dict[str, Any]]


def _parse_step(line: str) -> Step | None:
    """``state.rule(k=v, ...)`` as (rule, kwargs), or None when an argument is not a literal."""
    try:
        node = ast.parse(line, mode="eval").body
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args):
            return None
        return node.func.attr, {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
    except (SyntaxError, ValueError):
        return None


def _signature(error: BaseException) -> tuple[str, str]:
    """What makes two failures the same one: the exception type and the message up to its first ':' or '('."""
    return type(error).__name__, re.split(r"[:(]", str(error), maxsplit=1)[0]


def _minimize_steps(machine: type[LockstepMachine], lines: list[str], failure: BaseException) -> list[str]:
    """Drop machine steps one at a time while the same failure remains (the initialization stays)."""
    parsed = [_parse_step(line) for line in lines]
    if not lines or any(p is None for p in parsed):
        return lines
    steps = [p for p in parsed if p is not None]
    want = _signature(failure)

    def fails(candidate: list[Step]) -> bool:
        state = machine()
        try:
            state.check_step()
            for name, kwargs in candidate:
                getattr(state, name)(**kwargs)
                state.check_step()
        except Exception as error:  # the machine's verdict, whatever it raises
            return _signature(error) == want
        finally:
            state.teardown()
        return False

    if not fails(steps):
        return lines
    index = len(steps) - 1
    while index >= 1:  # steps[0] is the initialization
        candidate = steps[:index] + steps[index + 1 :]
        if index < len(steps) and fails(candidate):
            steps = candidate
        index -= 1
    return [f"state.{name}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})" for name, kwargs in steps]


def _without_one_shots(session: Session, recording: Recording, replayed: Replay) -> tuple[Replay, bool]:
    """The same calls with lists for one-shot iterators if they still diverge; else E8 is what breaks."""
    if not any(isinstance(v, OneShot) for call in replayed.calls for _, v in call.bound):
        return replayed, False
    plain = [
        replace(
            call, bound=tuple((k, list(v.values) if isinstance(v, OneShot) else v) for k, v in call.bound)
        )
        for call in replayed.calls
    ]
    again = replay(session, recording, plain)
    return (again, False) if again.divergence is not None else (replayed, True)


def _explain(
    result: OracleResult, session: Session, failure: BaseException, target_path: str, program: list[object]
) -> None:
    """Fill in the clauses, the shrunk calls and the reproduction of a failure."""
    if isinstance(failure, ConstructorRefused):
        _explain_refusal(result, failure, target_path)
        return
    recording = session.recording
    machine_message = f"{type(failure).__name__}: {failure}".strip()
    if not session.component.replayable:
        _explain_program(result, session, failure, target_path, program)
        return
    if recording is None:
        result.message = f"the machine failed before building the target: {machine_message}"
        return
    replayed = minimize(session, recording)
    if replayed is None or replayed.divergence is None:
        # The machine saw something the replay does not (an answer it compares some other way).
        result.message = f"{machine_message} (not reproduced by replaying the calls alone)"
        result.clauses = list(dict.fromkeys(CLAUSE_ID.findall(machine_message)))  # the machine's own
        result.counterexample = render_calls(session, recording.calls, recording.start)
        return
    replayed, one_shot_matters = _without_one_shots(session, recording, replayed)
    # The counterexample, replayed once more on a fresh target: the last one built, and it received
    # exactly the calls printed (O1).
    replayed = replay(session, recording, replayed.calls)
    index = replayed.divergence
    assert index is not None
    got, want = replayed.got[index], replayed.want[index]
    call = render_call(session, replayed.calls[index])
    if want is None:
        result.message = f"{call} raised {got[1]}"
    else:
        answer = f"answered {got[1]!r}" if got[0] == "value" else f"raised {got[1]}"
        expected = f"answers {want[1]!r}" if want[0] == "value" else f"raises {want[1]}"
        result.message = f"{call} {answer}; the spec {expected}"
    result.clauses = session.classify(replayed, recording.init) if want is not None else []
    if one_shot_matters:
        result.clauses = ["E8", *(c for c in result.clauses if c != "E8")]
    result.counterexample = render_calls(session, replayed.calls, recording.start)
    result.calls = len(replayed.calls)
    result.repro = render_repro(
        session, replayed, recording.init, recording.start, target_path, result.clauses
    )
