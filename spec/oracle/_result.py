"""The last phase of every run of the oracle: what a search found, verified and turned into the report.

A mode of the oracle (the sequential search of ``_sequential.py``; threads and traces beside it) hands
:func:`build_result` a :class:`Found`; the result checks what the run controlled (O4) and says which
clauses passed.  :class:`OracleResult` is the report, as text (:meth:`OracleResult.summary`) and as
JSON (:meth:`OracleResult.as_dict`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from ..conformance.clauses import CLAUSE_ID
from ._components import Component

if TYPE_CHECKING:
    from ._prepared import Prepared

__all__ = [
    "Failure",
    "Found",
    "OracleResult",
    "Subject",
    "build_result",
    "failure_entry",
    "fields_of",
    "grouped",
    "subject_of",
    "unchecked_for_want",
]


@dataclass
class Failure:
    """One failing clause of a report (an item of ``OracleResult.failures``): attributes in Python, the
    same names as keys in JSON (:meth:`as_dict`); ``failure["clauses"]`` reads as ``failure.clauses``.

    ``clauses`` the broken clause IDs, most specific first; ``message`` the divergence;
    ``counterexample`` the lines that replay it (the clock's start and the construction first, then the
    calls and clock moves; a file component's machine steps); ``calls`` how many calls (clock moves and
    the construction not counted); ``repro`` a pytest file (empty when a call did not return: it would
    hang); ``stacks`` every thread's stack when a call did not return within the call timeout (O8), else
    "".  ``inferred``: the clause was inferred
    without a ``snapshot()``: from the rule that made the state the diverging answer reads, where one
    did (``provenance``, O11: the clauses, first in ``clauses``, of the rules whose known wrong form gives
    every answer of the counterexample), then the clause of the first diverging answer's operation; then
    ``consistent_with`` lists the other clauses the same counterexample is consistent with.
    """

    clauses: list[str]
    message: str
    calls: int
    counterexample: list[str]
    repro: str
    inferred: bool = False
    consistent_with: list[str] = field(default_factory=list)
    stacks: str = ""
    provenance: list[str] = field(default_factory=list)

    def __getitem__(self, key: str) -> Any:
        if key not in _FAILURE_KEYS:
            raise KeyError(key)
        return getattr(self, key)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _FAILURE_KEYS}


_FAILURE_KEYS = tuple(f.name for f in fields(Failure))


@dataclass
class OracleResult:
    """What a run of the oracle found; :meth:`as_dict` (``--json``) has the same names as keys.

    ``verdict`` is ``"PASS"`` or ``"FAIL"`` (``passed`` the same as a bool); ``figures`` the examples,
    steps, distinct states and seconds covered; ``left_out`` the clause groups not checked (in full),
    each with why: left out on request, set aside after its failure, or for want of a method or
    parameter of the target (those are in ``missing``, name -> why); ``time_control`` how the oracle
    controlled the target's time, ``fs_control`` its filesystem (None for a component without one);
    ``declared`` the design choices the run followed (O3: ``{"eviction": "birth"}``, the defaults
    unless declared); ``passed_clauses`` the clauses checked and not failed.  ``failures`` every
    failing clause (O2), each a :class:`Failure`; ``clauses``, ``message``, ``counterexample``,
    ``calls``, ``repro`` and ``stacks`` repeat the first one's (empty on PASS).  ``not_checked``
    (O8): clause -> why it was not checked, as the report prints it after "not checked" ("(sequential
    run; use --threads)", "after V5 was set aside", "(the search stopped after ...)").
    ``bad_inputs`` the bad inputs B1 tried (``constructor ...`` for the constructor's settings),
    ``bad_inputs_not_tried`` the settings the target's constructor form cannot take, each with why.
    ``strict_gaps``: clause -> why, what ``--strict`` exits 1 on (:meth:`strict_summary`): the clauses
    not checked for want of a method or mapping of the target, and those under ``not_checked`` except
    the ones no run of this mode can check (M7 in a sequential run) and those that follow from a
    ``--leave-out`` on request.
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
    fs_control: str | None = None  # O4: how the oracle controlled the target's filesystem (file components)
    missing: dict[str, str] = field(default_factory=dict)
    clauses: list[str] = field(default_factory=list)
    message: str = ""
    counterexample: list[str] = field(default_factory=list)
    calls: int = 0  # the number of calls in the counterexample (clock moves not counted)
    repro: str = ""
    stacks: str = ""  # O8: a call that did not return within the call timeout: every thread's stack then
    failures: list[Failure] = field(default_factory=list)
    passed_clauses: list[str] = field(default_factory=list)
    not_checked: dict[str, str] = field(default_factory=dict)
    strict_gaps: dict[str, str] = field(default_factory=dict)
    bad_inputs: list[str] = field(default_factory=list)  # B1: the bad inputs tried, each once at least
    # B1: the bad constructor settings the target's constructor form cannot take, each with why
    bad_inputs_not_tried: dict[str, str] = field(default_factory=dict)
    # --settings: the file store's configuration the run pinned (None: drawn per example)
    settings: dict[str, Any] | None = None
    failure: BaseException | None = field(default=None, repr=False, compare=False)

    @property
    def passed(self) -> bool:
        return self.verdict == "PASS"

    def failure_dict(self) -> Failure:
        """The first failure (the top-level fields), as a :class:`Failure`."""
        first = failure_entry(self.clauses, self.message, self.calls, self.counterexample, self.repro)
        first.stacks = self.stacks
        return first

    def as_dict(self) -> dict[str, Any]:
        """The JSON report: every field under its own name, ``passed`` (the bool) included."""
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "failure"}
        out["failures"] = [failure.as_dict() for failure in self.failures]
        out["passed"] = self.passed
        return out

    def summary(self) -> str:
        """A human-readable report (what the CLI prints without ``--json``)."""
        f = self.figures
        covered = (
            f"  threads {f['threads']}, histories {f['histories']}, calls {f['operations']}"
            f" ({f['overlapping']} overlapping another thread's), search steps {f['search_steps']},"
            if "histories" in f  # --threads (O6)
            else f"  examples {f['examples']}, steps {f['steps']}, distinct states {f['distinct_states']},"
        )
        lines = [
            f"{self.verdict}: {self.target} as {self.component}",
            f"{covered} {f['seconds']} s (seed {self.seed})",
            f"  time: {self.time_control}",
        ]
        if self.fs_control:
            lines.append(f"  filesystem: {self.fs_control}")
        if self.settings is not None:
            shown = ", ".join(f"{k}={v!r}" for k, v in self.settings.items())
            lines.append(f"  settings: {shown} (pinned: --settings, the others the engine's defaults)")
        if self.declared:
            lines.append(f"  declared: {', '.join(f'{k}={v}' for k, v in self.declared.items())}")
        lines += [f"  missing: {name}: {why}" for name, why in self.missing.items()]
        lines += [f"  left out: {why}" for why in self.left_out.values()]
        for failure in self.failures or ([self.failure_dict()] if self.verdict == "FAIL" else []):
            calls = failure.calls
            broken = ", ".join(failure.clauses) or "the target's own invariants"
            if failure.inferred:
                others = ", ".join(failure.consistent_with) or "no other"
                made = ", ".join(failure.provenance)
                broken += (
                    (
                        " (inferred without snapshot(), from the rule that made the state the diverging"
                        f" answer reads: the counterexample is consistent with {made} in its known wrong"
                        " form; next the clause of the operation whose answer first diverged; the"
                        f" counterexample is also consistent with {others})"
                    )
                    if made
                    else (
                        " (inferred without snapshot(): the clause of the operation whose answer first"
                        f" diverged; the counterexample is also consistent with {others})"
                    )
                )
            lines.append(f"  breaks: {broken}")
            lines.append(f"  divergence: {failure.message}")
            lines.append(f"  counterexample ({calls} call{'' if calls == 1 else 's'}):")
            lines += [f"    {line}" for line in failure.counterexample]
            if failure.stacks:  # O8: a call that did not return, with every thread's stack
                lines.append("  stacks:")
                lines += [f"    {line}" for line in failure.stacks.splitlines()]
        if self.verdict == "UNKNOWN":
            lines.append(f"  unknown: {self.message}")
        if self.passed_clauses:
            lines.append(f"  passed: {', '.join(self.passed_clauses)}")
        if self.bad_inputs:
            lines.append(f"  bad inputs tried (B1): {'; '.join(grouped(self.bad_inputs))}")
        if self.bad_inputs_not_tried:
            untried = "; ".join(f"{label} ({why})" for label, why in self.bad_inputs_not_tried.items())
            lines.append(f"  bad inputs not tried (B1): {untried}")
        by_reason: dict[str, list[str]] = {}
        for clause, why in self.not_checked.items():
            by_reason.setdefault(why, []).append(clause)
        lines += [f"  not checked {why}: {', '.join(clauses)}" for why, clauses in by_reason.items()]
        return "\n".join(lines)

    def strict_summary(self) -> str:
        """``--strict``'s verdict on what went unchecked (:attr:`strict_gaps`): "" when nothing counts."""
        if not self.strict_gaps:
            return ""
        gaps = "; ".join(f"{clause} {why}" for clause, why in self.strict_gaps.items())
        return f"STRICT: not checked: {gaps}"


def grouped(labels: list[str]) -> list[str]:
    """B1's labels (``method input``) for the text report: one entry per input, with every method it was
    tried on (``key='' on set, get, exists``); an input tried on one method keeps its label.

    >>> grouped(["get key=5", "set key=5", "set value=None"])
    ['key=5 on get, set', 'set value=None']
    """
    methods: dict[str, list[str]] = {}
    for label in labels:
        method, _, tried = label.partition(" ")
        methods.setdefault(tried, []).append(method)
    return [
        f"{tried} on {', '.join(on)}" if len(on) > 1 else f"{on[0]} {tried}" for tried, on in methods.items()
    ]


def failure_entry(
    clauses: list[str],
    message: str,
    calls: int,
    lines: list[str],
    repro: str,
    *,
    inferred: bool = False,
    consistent_with: list[str] | None = None,
    provenance: list[str] | None = None,
) -> Failure:
    """One failing clause of a report (an item of ``OracleResult.failures``)."""
    others = list(consistent_with or [])
    return Failure(clauses, message, calls, lines, repro, inferred, others, provenance=list(provenance or []))


@dataclass
class Found:
    """What a mode hands the result, the same in every mode (the sequential search, ``--threads``, a
    trace): the figures it covered, each failure (as :func:`failure_entry` gives it) with the error the
    search saw, the first first, and what the mode judged and did not.  :func:`build_result` makes the
    report of it; no mode makes its own."""

    figures: dict[str, Any]  # what the mode covered, as the report shows it (``seconds`` included)
    failures: list[Failure] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)
    # O8: clause -> why this mode did not check it (M7 in a sequential run: "sequential run; use --threads")
    not_checked: dict[str, str] = field(default_factory=dict)
    # O8: why the search ended before its budget was spent ("" when it was spent): every clause neither
    # failed nor left out is then not checked, for this reason
    stopped: str = ""
    bad_inputs: list[str] = field(default_factory=list)  # B1: the bad inputs tried, each once at least
    # B1: the bad constructor settings the target's constructor form cannot take (label -> why)
    bad_inputs_not_tried: dict[str, str] = field(default_factory=dict)
    # The clauses the mode's checks passed, for a mode that judges a few clauses (threads, a trace); None:
    # the machine's search, which checks every clause of the component that is not failed, left out or
    # under ``not_checked``.  With a list, ``excused`` says which of ``not_checked`` no run of this mode
    # can check (``--strict`` does not count them).
    judged: list[str] | None = None
    excused: frozenset[str] = frozenset()
    unknown: str = ""  # why there is no verdict (a search budget ran out): the report is UNKNOWN, exit 3
    also: str = ""  # what the report's message adds to the first failure's (more parts of a trace)
    report: type[OracleResult] = OracleResult  # the mode's report class (a threads history, a trace's parts)
    details: dict[str, Any] = field(default_factory=dict)  # the fields that class adds
    set_aside: frozenset[str] = frozenset()  # O2: the clauses and groups the search set aside after failing
    left_out: dict[str, str] = field(default_factory=dict)  # O2: the groups of those, with why (the report's)
    # O6: the calls of the failing threads history, made one at a time, already diverge: the class is
    # wrong sequentially, and the run's path asks the sequential search for the clause (_run.check_threads)
    alone: bool = False


@dataclass(frozen=True)
class Subject:
    """What a report is about and what its run controlled, in any mode: the component, the target (or the
    trace), the groups and names left out with why (``Session.left_out``, then those the search set aside
    after their failure, ``Found.left_out``), the declared choices (O3), how time and the filesystem
    were controlled (O4), the adapter and the pinned settings; ``whose`` and ``groups`` as
    :func:`fields_of` takes them."""

    component: Component
    target: str
    left_out: Mapping[str, str]
    declared: Mapping[str, str]
    time_control: str
    adapter: dict[str, Any]
    fs_control: str | None = None
    settings: dict[str, Any] | None = None
    whose: str = "the target's"
    groups: tuple[str, ...] = ()


def subject_of(run: Prepared, found: Found) -> Subject:
    """The :class:`Subject` of a run over a target: its session, and what its search ``found`` set aside."""
    session = run.session
    return Subject(
        component=run.component,
        target=run.target_path,
        left_out={**session.left_out, **found.left_out},
        declared=dict(session.declared),
        time_control=session.describe_time(),
        adapter=session.adapter.as_dict(),
        fs_control=None if session.fs_control.mode == "none" else session.fs_control.describe(),
        settings=None if session.settings is None else dict(session.settings),
    )


def build_result(subject: Subject, found: Found, seed: int) -> OracleResult:
    """The report of a run, in every mode: the verdict, what the run controlled, the failures, and which
    clauses passed, were not checked (O8) and count for ``--strict``."""
    component = subject.component
    fields_, unchecked = fields_of(
        component,
        subject.left_out,
        found.failures,
        time_control=subject.time_control,
        adapter=subject.adapter,
        declared=subject.declared,
        fs_control=subject.fs_control,
        whose=subject.whose,
        groups=subject.groups,
    )
    verdict = "FAIL" if found.failures else "UNKNOWN" if found.unknown else "PASS"
    result = found.report(
        target=subject.target,
        verdict=verdict,
        seed=seed,
        figures=dict(found.figures),
        failure=found.errors[0] if found.errors else None,
        settings=subject.settings,
        **fields_,
        **found.details,
    )
    if found.unknown and not found.failures:
        result.message = found.unknown
    result.message += found.also
    if found.judged is None:  # the machine's search: every clause it checks, but those it did not
        # An inferred blame's other clauses are named by the failure: neither passed nor "not checked".
        failed = {c for f in found.failures for c in (*f.clauses, *f.consistent_with)}
        not_run = {c for why in subject.left_out.values() for c in CLAUSE_ID.findall(why.split(":", 1)[0])}
        result.not_checked = _not_checked(subject, found, failed, not_run)
        not_passed = failed | not_run | set(result.not_checked)
        checked = component.checked_clauses(subject.declared)  # O3: V3-bg in place of V3, where declared
        result.passed_clauses = [c for c in checked if c not in not_passed]
        excused = _excused(subject, found)
    else:
        result.not_checked = dict(found.not_checked)
        result.passed_clauses = list(found.judged)
        excused = set(found.excused)
    result.bad_inputs = sorted(found.bad_inputs)
    result.bad_inputs_not_tried = dict(found.bad_inputs_not_tried)
    result.strict_gaps = {**unchecked, **{c: w for c, w in result.not_checked.items() if c not in excused}}
    return result


def unchecked_for_want(
    component: Component, left_out_all: Mapping[str, str], groups: Collection[str] = ()
) -> dict[str, str]:
    """The clauses not checked for want of a method or parameter of the target (clause -> why), as
    :func:`fields_of` gives them (``groups`` as it takes them): what ``--strict`` counts in every mode."""
    nothing: dict[str, Any] = {"time_control": "", "adapter": {}, "declared": {}, "fs_control": None}
    return fields_of(component, left_out_all, [], groups=groups, **nothing)[1]


def fields_of(
    component: Component,
    left_out_all: Mapping[str, str],
    failures: list[Failure],
    *,
    time_control: str,
    adapter: dict[str, Any],
    declared: Mapping[str, str],
    fs_control: str | None,
    whose: str = "the target's",
    groups: Collection[str] = (),
) -> tuple[dict[str, Any], dict[str, str]]:
    """The fields of a report every mode fills alike: what the run controlled, declared and left out
    (``left_out_all`` holds both kinds, as ``Session.left_out`` does: ``left_out`` gets the clause groups,
    ``missing`` the rest, the methods and parameters the target lacks, or for a trace the calls it has
    none of) and the first failure's fields repeated at the top; with them, the clauses not checked for
    want of what ``missing`` names (clause -> why, what ``--strict`` counts in every mode).  A ``missing``
    entry's clauses are the clause IDs before the first ":" of its why; ``whose`` names the owner in
    ``left_out``'s text ("the target's", "the trace's"); ``groups`` what goes under ``left_out`` besides the
    component's groups (a trace's header may leave out any clause)."""
    kept = {*component.groups, *groups}
    missing = {name: why for name, why in left_out_all.items() if name not in kept}
    left_out = {group: why for group, why in left_out_all.items() if group in kept}
    wanting: dict[str, list[str]] = {}  # clause -> the missing methods and parameters that carry it
    for name, why in missing.items():
        for clause in CLAUSE_ID.findall(why.split(":", 1)[0]):
            wanting.setdefault(clause, []).append(name)
    unchecked = {clause: f"(no {', '.join(names)})" for clause, names in wanting.items()}
    for clause, names in wanting.items():
        wants = ", ".join(names)
        left_out.setdefault(clause, f"{clause}: not checked in full for want of {whose} {wants}")
    first = failures[0] if failures else Failure([], "", 0, [], "")
    out = {
        "component": component.name,
        "time_control": time_control,
        "left_out": left_out,
        "missing": missing,
        "adapter": adapter,
        "declared": dict(declared),
        "fs_control": fs_control,
        **{name: getattr(first, name) for name in ("clauses", "message", "counterexample", "calls", "repro")},
        "stacks": first.stacks,
        "failures": failures,
    }
    return out, unchecked


def _not_checked(subject: Subject, found: Found, failed: set[str], left_out: set[str]) -> dict[str, str]:
    """O8: the clauses a run did not check to their budget, each with why: what the mode cannot check,
    what needs the rules of a group set aside or left out, what the search did not reach."""
    component = subject.component
    out = {c: why for c, why in found.not_checked.items() if c not in failed}
    for group, why in subject.left_out.items():
        for clause in CLAUSE_ID.findall(why.split(":", 1)[0]):
            aside = group in found.set_aside
            reason = f"after {clause} was set aside" if aside else f"while {clause} is left out"
            for needing in component.depends.get(clause, ()):
                if needing not in failed | left_out:
                    out.setdefault(needing, reason)
    if found.stopped:
        for clause in component.checked_clauses(subject.declared):
            if clause not in failed | left_out:
                out.setdefault(clause, found.stopped)
    return out


def _excused(subject: Subject, found: Found) -> set[str]:
    """What of O8's ``not_checked`` ``--strict`` does not count: the clauses no run of this mode can
    check (``Found.not_checked``: M7 in a sequential run, which the oracle has no other mode for yet) and
    those that need a group the user left out on request (``--leave-out``: asked for, so not a gap)."""
    component = subject.component
    requested = {
        clause
        for group, why in subject.left_out.items()
        if group in component.groups and group not in found.set_aside
        for clause in CLAUSE_ID.findall(why.split(":", 1)[0])
    }
    return set(found.not_checked) | {d for c in requested for d in component.depends.get(c, ())}
