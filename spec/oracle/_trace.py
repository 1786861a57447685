"""``--trace FILE`` (O7): judge a recorded history, from any implementation in any language, against the spec.

The trace (hicache-trace/1, read by :mod:`spec.oracle._trace_format`) is a
history: calls of threads, each with its interval on the implementation's
clock.  It is valid when it is *timed linearizable* against the component's
spec, configured from the trace's header: the search of
:mod:`spec.linearizability.checker`, with the metadata cache's instants kept
as a zone (:mod:`spec.linearizability.timed`) and the existence caches' specs
stepped directly (they do not read a clock).

Where the spec's state splits (an unbounded metadata cache whose trace has no
``len`` or ``clear`` and no batch over two keys: by key; beliefs bounded per
pool: by pool), each part is searched on its own.  The verdict is the same:
no call of one key can change another key's answers, and putting the parts'
orders together by their instants respects real time (a call that returned
before another was invoked has the earlier instant).

A FAIL prints a smallest set of the trace's lines that no order explains
(1-minimal: dropping any one line leaves an explained set), found by removing
chunks and then single lines while the rest stays unexplained.  A search
that runs out of its step budget is UNKNOWN (exit 3), never PASS.

The blame is by provenance (O11) where the trace shows one: when the spec with one of its rules in its
known wrong form (M3's re-add that keeps an expired entry's birth, E3's hit that does not refresh)
explains the lines, that rule's clause is named first, and the lines printed are those that show it.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..linearizability.checker import Operation, Raised, Verdict, check_history
from ..linearizability.timed import TimedMetadataCacheSpec, TimedStaleBirthKeptOnReAdd
from ..models.existence_cache import StorageExistenceCacheSpec
from ..models.pool_beliefs import PooledExistenceCacheSpec
from ._adapter import Adapter
from ._budgets import DEFAULT_MAX_STEPS
from ._components import COMPONENTS
from ._result import (
    Failure,
    Found,
    OracleResult,
    Subject,
    build_result,
    failure_entry,
    unchecked_for_want,
)
from ._trace_format import TRACE_COMPONENTS, Trace, TraceFormatError, parse_trace

__all__ = ["DEFAULT_MAX_STEPS", "MINIMIZE_CHECKS", "TraceResult", "check_trace"]

MINIMIZE_CHECKS = 400  # searches spent on making an unexplained set smaller, per failure
MINIMIZED_FAILURES = 3  # failing parts whose lines are minimized and printed (the others are counted)


class _Anything:
    """The recorded answer of a call whose clause the header left out: every answer is accepted."""

    def __repr__(self) -> str:
        return "(not judged)"


ANYTHING: Any = _Anything()


def _plain(value: Any) -> Any:
    """An answer as JSON writes it: tuples and sets become lists (sets sorted by repr), bytes text."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v) for v in value), key=repr)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    return value


def _accepts(recorded: Any, answer: Any) -> bool:
    """The answer-acceptance hook of the trace specs: JSON's lists for tuples, text for bytes."""
    return recorded is ANYTHING or recorded == answer or recorded == _plain(answer)


class _MetadataTraceSpec(TimedMetadataCacheSpec):
    accepts = staticmethod(_accepts)


class _ExistenceTraceSpec:
    """``spec.models.existence_cache`` stepped over a tuple of beliefs (no clock: E reads none)."""

    accepts = staticmethod(_accepts)

    def __init__(
        self, max_entries: int, bound: str = "global", model: Callable[..., Any] | None = None
    ) -> None:
        self.max_entries, self.bound = max_entries, bound
        self.model = StorageExistenceCacheSpec if model is None else model  # O11: or a rule's wrong form
        self.initial: tuple[Any, ...] = ()

    def step(self, state: tuple[Any, ...], name: str, args: tuple[Hashable, ...]) -> tuple[Any, Any]:
        model = self.model(self.max_entries, bound=self.bound)
        model.beliefs = list(state)
        if name == "len":
            answer: Any = len(model)
        elif name == "covers_all" and len(args) == 3:
            extra: tuple[Hashable, ...] = args[2]  # type: ignore[assignment]
            answer = model.covers_all(args[0], args[1], frozenset(extra))  # type: ignore[arg-type]
        else:
            answer = getattr(model, name)(*args)
        return tuple(model.beliefs), answer


class _PoolsTraceSpec:
    """``models.pool_beliefs`` stepped over a frozen set of non-empty pools (beliefs, in-flight counts)."""

    accepts = staticmethod(_accepts)

    def __init__(self, max_entries: int, registry: Callable[..., Any] | None = None) -> None:
        self.max_entries = max_entries
        self.registry = PooledExistenceCacheSpec if registry is None else registry  # O11: or a wrong form
        self.initial: frozenset[Any] = frozenset()

    def step(self, state: frozenset[Any], name: str, args: tuple[Hashable, ...]) -> tuple[Any, Any]:
        registry = self.registry(self.max_entries)
        for pool, beliefs, inflight in state:
            model = registry.pool(pool)
            model.beliefs, model.inflight = list(beliefs), dict(inflight)
        if name.startswith("pool."):
            model = registry.pool(args[0])
            method = name.removeprefix("pool.")
            answer = len(model) if method == "len" else getattr(model, method)(*args[1:])
        else:
            answer = getattr(registry, name)()
        after = frozenset(
            (pool, tuple(model.beliefs), frozenset(model.inflight.items()))
            for pool, model in registry.pools.items()
            if model.beliefs or model.inflight
        )
        return after, answer


class _MetadataStaleBirthTraceSpec(TimedStaleBirthKeptOnReAdd):
    accepts = staticmethod(_accepts)


# O11: the metadata cache's rules in their known wrong form on a real clock, by clause (the existence
# caches' are the component's own wrong-form models, stepped as the spec is)
_TIMED_WRONG_FORMS: dict[str, type[TimedMetadataCacheSpec]] = {"M3": _MetadataStaleBirthTraceSpec}


def _spec(trace: Trace, wrong: str = "", **overrides: Any) -> Any:
    """The trace spec of ``trace``'s component, configured from its header; with ``wrong``, the spec
    with that clause's rule in its known wrong form (O11)."""
    settings = {**trace.config, **overrides}
    if trace.component == "metadata-cache":
        eviction = trace.declare.get("eviction", "birth")
        timed = _TIMED_WRONG_FORMS[wrong] if wrong else _MetadataTraceSpec
        return timed(settings["ttl_seconds"], settings["max_entries"], eviction)
    model = COMPONENTS[trace.component].wrong_form(wrong) if wrong else None
    if trace.component == "existence-cache":
        return _ExistenceTraceSpec(settings["max_entries"], trace.declare.get("bound", "global"), model)
    return _PoolsTraceSpec(settings["max_entries"], model)


def _part_of(trace: Trace) -> Callable[[Operation], Hashable] | None:
    """How the trace splits into parts the spec judges apart (None: it does not split)."""
    names = {op.name for op in trace.operations}
    if trace.component == "metadata-cache":
        wide = any(len(set(op.args)) > 1 for op in trace.operations)
        if trace.config["max_entries"] is not None or names & {"len", "clear"} or wide:
            return None
        return lambda op: op.args[0] if op.args else ("an empty batch", op.line)
    if trace.component == "existence-cache":
        if trace.declare.get("bound") != "per-pool" or names & {"len", "clear"}:
            return None
        return lambda op: op.args[0]
    if names & {"clear", "clear_inflight"}:  # the registry's own calls act on every pool
        return None
    return lambda op: op.args[0]


@dataclass
class _Part:
    key: Hashable
    operations: list[Operation]
    verdict: Verdict


@dataclass
class TraceResult(OracleResult):
    """:class:`~spec.oracle.OracleResult` of a trace; ``verdict`` is also ``"UNKNOWN"`` (exit 3)."""

    parts: int = 0
    unexplained: list[Operation] = field(default_factory=list, repr=False, compare=False)  # the answers
    needed: list[Operation] = field(default_factory=list, repr=False, compare=False)  # the calls they need
    context: list[Operation] = field(default_factory=list, repr=False, compare=False)  # their part

    def as_dict(self) -> dict[str, Any]:
        out = super().as_dict()
        for name in ("parts", "unexplained", "needed", "context"):
            out.pop(name, None)
        return out

    def picture_history(self, most: int = 120) -> tuple[list[Operation], set[int]]:
        """The calls to draw (the unexplained ones and the calls of their part around them, at most
        ``most``) and the indices of the unexplained among them."""
        red = self.unexplained
        if red:
            involved = [*red, *self.needed]
            ids = {id(op) for op in involved}
            low, high = min(op.call for op in involved), max(op.end for op in involved)
            around = [op for op in self.context if op.end >= low and op.call <= high and id(op) not in ids]
            shown = sorted([*involved, *around][:most], key=lambda op: op.call)
        else:
            shown = self.context[:most]
        ids = {id(op) for op in red}
        return shown, {i for i, op in enumerate(shown) if id(op) in ids}

    def summary(self) -> str:
        lines = super().summary().splitlines()
        f = self.figures
        lines[1] = (
            f"  {f['calls']} calls of {f['threads']} threads, judged in {f['parts']} part(s);"
            f" search steps {f['steps']}, configurations {f['distinct_states']}, {f['seconds']} s"
        )
        return "\n".join(lines)


def _fails(operations: Sequence[Operation], spec: Any, max_steps: int) -> bool:
    return check_history(operations, spec, max_steps).linearizable is False


def _smaller(items: list[Operation], fails: Callable[[list[Operation]], bool], checks: list[int]) -> bool:
    """Drop chunks, then single items, of ``items`` (in place) while ``fails`` holds; whether it ended
    1-minimal (False: ``checks[0]``, the searches left, ran out)."""
    chunks = 2
    while len(items) > 1:
        width = -(-len(items) // chunks)
        for start in range(0, len(items), width):
            if checks[0] <= 0:
                return False
            checks[0] -= 1
            candidate = items[:start] + items[start + width :]
            if candidate and fails(candidate):
                items[:] = candidate
                chunks = max(chunks - 1, 2)
                break
        else:
            if width == 1:
                return True
            chunks = min(len(items), chunks * 2)
    return True


def minimal_unexplained(
    operations: Sequence[Operation], spec: Any, max_steps: int, checks: int = MINIMIZE_CHECKS
) -> tuple[list[Operation], list[Operation], bool]:
    """Of ``operations`` (which no order explains): the fewest answers that no order explains while the
    calls around them take effect, the fewest of those calls they need, and whether both are 1-minimal
    (False: the ``checks`` budget of searches ran out first).

    First the shortest prefix (by return) that is unexplained; then its answers are dropped (the call
    still takes effect, any answer accepted) while the rest stays unexplained; then the calls whose
    answers were dropped are removed while it still does.  The answers and the calls they need,
    together, are a set of lines that no order explains.
    """
    budget = [checks]
    by_end = sorted(operations, key=lambda op: (op.end, op.call))
    size = 1
    while size < len(by_end) and budget[0] > 0:
        budget[0] -= 1
        if _fails(by_end[:size], spec, max_steps):
            break
        size *= 2
    prefix = by_end[: min(size, len(by_end))]
    answers = list(prefix)

    def judged(kept: list[Operation]) -> list[Operation]:
        keep = {id(op) for op in kept}
        return [op if id(op) in keep else replace(op, result=ANYTHING) for op in prefix]

    complete = _smaller(answers, lambda kept: _fails(judged(kept), spec, max_steps), budget)
    chosen = {id(op) for op in answers}
    context = [op for op in prefix if id(op) not in chosen]
    free = {id(op): replace(op, result=ANYTHING) for op in context}

    def needs(kept: list[Operation]) -> bool:
        return _fails([*answers, *(free[id(op)] for op in kept)], spec, max_steps)

    support = _support(answers, context, free, spec, max_steps, budget)
    if support is None:  # the budget ran out: every call around the answers is kept
        return answers, context, False
    rest = [op for op in context if op not in support]
    if needs(support):
        return answers, support, complete
    complete = _smaller(rest, lambda kept: needs([*support, *kept]), budget) and complete
    return answers, sorted([*support, *rest], key=lambda op: op.call), complete


def _atoms(args: Any) -> set[Hashable]:
    """The keys, pools and page hashes among a call's arguments."""
    if isinstance(args, tuple):
        return {atom for arg in args for atom in _atoms(arg)}
    return {args}


def _support(
    answers: list[Operation],
    context: list[Operation],
    free: dict[int, Operation],
    spec: Any,
    max_steps: int,
    budget: list[int],
) -> list[Operation] | None:
    """The calls that give each unexplained answer its cause, where an answer alone has none (a hit
    with its add dropped is unexplained for a reason the trace does not have): for each such answer,
    the first call that explains it on its own.  None: the budget ran out."""
    support: list[Operation] = []
    for answer in answers:
        budget[0] -= 1
        if budget[0] < 0:
            return None
        if not _fails([answer], spec, max_steps):
            continue
        mine = _atoms(answer.args)
        for op in sorted(context, key=lambda other: not (_atoms(other.args) & mine)):  # its keys first
            budget[0] -= 1
            if budget[0] < 0:
                return None
            if not _fails([answer, free[id(op)]], spec, max_steps):
                if op not in support:
                    support.append(op)
                break
    return support


def _overlapping(operations: Sequence[Operation]) -> bool:
    """Whether two calls of different threads overlap in time."""
    ordered = sorted(operations, key=lambda op: op.call)
    latest: tuple[float, Any] | None = None
    for op in ordered:
        if latest is not None and op.call <= latest[0] and op.thread != latest[1]:
            return True
        if latest is None or op.end > latest[0]:
            latest = (op.end, op.thread)
    return False


def _clauses(
    trace: Trace, answers: Sequence[Operation], unexplained: Sequence[Operation], max_steps: int
) -> list[str]:
    """The clauses a set of unexplained calls breaks, most specific first: M6 when the bound is
    involved (the set is explained without it, or holds more keys than it); M3 when a hit is
    unexplained after a key was added twice (a re-add that restarted a life); the last unexplained
    answer's own clause; B1 when an exception is involved; M7 last, when calls of different threads
    overlap in the set (a race may be the cause; a trace cannot tell, a run under --threads can)."""
    culprit = max(answers, key=lambda op: (op.end, op.call))
    clauses = [trace.clauses[culprit.line or 0]]
    if any(isinstance(op.result, Raised) for op in unexplained):
        clauses.append("B1")
    if trace.component == "metadata-cache":
        added = Counter(k for op in unexplained if op.name in ("add", "add_many") for k in op.args)
        hit = culprit.result is True or (isinstance(culprit.result, list) and True in culprit.result)
        if hit and any(added[k] > 1 for k in culprit.args):
            clauses.insert(0, "M3")
        bound = trace.config["max_entries"]
        keys = {key for op in unexplained for key in op.args}
        if bound is not None and (
            len(keys) > bound or not _fails(unexplained, _spec(trace, max_entries=None), max_steps)
        ):
            clauses.insert(0, "M6")
        if _overlapping(unexplained):
            clauses.append("M7")
    return list(dict.fromkeys(clauses))


def _by_line(operations: Sequence[Operation]) -> list[Operation]:
    return sorted(operations, key=lambda o: o.line or 0)


def _failure(
    trace: Trace, part: _Part, spec: Any, max_steps: int
) -> tuple[Failure, list[Operation], list[Operation]]:
    answers, context, complete = minimal_unexplained(part.operations, spec, max_steps)
    made, kept = _made_by(trace, part, spec, answers, context, max_steps)
    if kept is not None:  # O11: the lines that show the rule's wrong form at work, its cause included
        chosen = {id(op) for op in answers}
        answers = [op for op in kept if id(op) in chosen] or [max(kept, key=lambda op: (op.end, op.call))]
        context = [op for op in kept if op not in answers]
    lines = _by_line([*answers, *context])
    clauses = list(dict.fromkeys([*made, *_clauses(trace, answers, lines, max_steps)]))
    where = "" if part.key is None else f" (of the {len(part.operations)} calls on {part.key!r})"
    numbers = ", ".join(str(op.line) for op in _by_line(answers))
    message = f"{clauses[0]}: no order, at instants inside the calls' intervals, explains line(s) {numbers}"
    if context:
        message += f" after the calls on line(s) {', '.join(str(op.line) for op in _by_line(context))}"
    message += where
    if not complete:
        message += f"; not minimized further (the {MINIMIZE_CHECKS} searches of the minimization ran out)"
    repro = "\n".join([trace.header, *(trace.texts[op.line or 0] for op in lines)]) + "\n"
    shown = [f"line {op.line}: {trace.texts[op.line or 0]}" for op in lines]
    entry = failure_entry(clauses, message, len(lines), shown, repro, inferred=bool(made), provenance=made)
    return entry, answers, context


def _made_by(
    trace: Trace,
    part: _Part,
    spec: Any,
    answers: list[Operation],
    context: list[Operation],
    max_steps: int,
) -> tuple[list[str], list[Operation] | None]:
    """O11: the clauses of the rules whose known wrong form explains what the spec does not (the rules
    that made the state the unexplained answers read), and the lines to print for it (None: the
    minimal set as it is).  First the minimal set, its context's answers judged too; then, where the
    minimal set has dropped the cause (the first add of a key whose re-add kept its birth is no part of
    a set that "add, then contains answers False" already leaves unexplained), the part's calls up to
    the last unexplained answer, cut down (as :func:`minimal_unexplained` does) to the fewest lines that
    the spec still does not explain and the wrong form does."""
    provenance = COMPONENTS[trace.component].provenance
    lines = _by_line([*answers, *context])
    made = [c for c in provenance if _explained(lines, _spec(trace, c), max_steps)]
    if made:
        return made, None
    last = max((op.end, op.call) for op in answers)
    prefix = [op for op in part.operations if (op.end, op.call) <= last]
    for clause in provenance:
        wrong = _spec(trace, clause)

        def shows(kept: list[Operation], wrong: Any = wrong) -> bool:
            return _fails(kept, spec, max_steps) and _explained(kept, wrong, max_steps)

        if shows(prefix):
            kept = list(prefix)
            _smaller(kept, shows, [MINIMIZE_CHECKS])
            return [clause], kept
    return [], None


def _explained(operations: Sequence[Operation], spec: Any, max_steps: int) -> bool:
    return check_history(operations, spec, max_steps).linearizable is True


# The clauses no call of a trace is judged for (O8: listed as not checked, and not counted by --strict,
# as M7 is not in a sequential run): what a trace cannot record, or (B1) has none of when no call raised.
NEVER_FROM_A_TRACE = {
    "M8": "(trace: stats answers are counters, which a trace cannot pin to one state; not judged)",
    "E1": "(trace: a trace records no construction)",
    "P1": "(trace: a trace records no construction and no pool lookup)",
    "E8": "(trace: a trace's hashes are JSON arrays; the iterables E8 promises to take are not recorded)",
    "B1": "(trace: no call in the trace raised, so no bad input was judged)",
}
_ALSO_JUDGED = frozenset({"M2", "M6"})  # a metadata cache's calls also judge expiry and (adds) the bound


def _carries(trace: Trace, name: str) -> set[str]:
    """The clauses a call of ``name`` in ``trace`` is judged against: its own (the format's), and for a
    metadata cache M2 (every answer at the call's instant) and M6 (an add, when the cache is bounded)."""
    clauses = {TRACE_COMPONENTS[trace.component][name].clause}
    if trace.component == "metadata-cache":
        method = "__len__" if name == "len" else name
        clauses |= _ALSO_JUDGED & set(COMPONENTS[trace.component].method_clauses.get(method, ()))
        if trace.config["max_entries"] is None:
            clauses.discard("M6")
    return clauses


def _judges(trace: Trace, op: Operation) -> set[str]:
    """The clauses one call of the trace is judged against (B1 too when it raised)."""
    return _carries(trace, op.name) | ({"B1"} if isinstance(op.result, Raised) else set())


def _left_out(trace: Trace) -> dict[str, str]:
    """What the trace leaves out, as a session's ``left_out`` holds it (for ``_result.fields_of``): the
    clauses its header leaves out (on request), and the rest, ``missing`` in the report: the calls it has
    none of, with the clauses no other call of it carries; an unbounded metadata cache's bound (M6); the
    calls it carries that no trace judges; the config settings the spec does not have."""
    left: dict[str, str] = {}
    for group in trace.leave_out:
        left[group] = (
            f"{group}: left out by the trace's header (its calls are stepped, their answers not judged)"
        )
    if not trace.operations:
        left["calls"] = "calls: the trace has no call line that the spec judges; nothing was checked"
    present = {op.name for op in trace.operations}
    carried = {c for name in present for c in _carries(trace, name)}
    for name in TRACE_COMPONENTS[trace.component]:
        lacking = sorted(_carries(trace, name) - carried - set(trace.leave_out))
        if name not in present and lacking:
            left[name] = f"{' '.join(lacking)} {name}: no call of {name} in the trace"
    if (
        trace.component == "metadata-cache"
        and trace.config["max_entries"] is None
        and "M6" not in trace.leave_out
    ):
        left["config max_entries"] = (
            "M6 config max_entries: null in the trace's header (an unbounded cache: no bound to judge)"
        )
    for name, count in sorted(trace.unchecked.items()):
        left[name] = f"{name}: {count} call(s) of {name} in the trace, not judged from a trace"
    for name in trace.ignored_config:
        left[f"config {name}"] = f"config {name}: not a setting of the spec, ignored"
    return left


def _coverage(
    trace: Trace, parts: list[_Part], failed: set[str], unchecked: Mapping[str, str]
) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """O8 for a trace: the clauses passed (those of the calls of the parts explained, none failed, none
    in a part unexplained or unsettled; M7 only when the whole trace is explained and calls of different
    threads overlap), every other clause of the component not failed nor left out under not checked with
    why, and what ``--strict`` counts (``unchecked``, the clauses with no call in the trace, and the not
    checked but for what no trace can check)."""
    component = COMPONENTS[trace.component]
    everything = [*component.checked_clauses(_declared(trace)), *component.threads_clauses]
    clauses_of = {
        verdict: {
            c
            for p in parts
            if p.verdict.linearizable is verdict
            for op in p.operations
            for c in _judges(trace, op)
        }
        for verdict in (True, False, None)
    }
    unknown = [p for p in parts if p.verdict.linearizable is None]
    whole = all(p.verdict.linearizable for p in parts)
    overlap = trace.component == "metadata-cache" and _overlapping(trace.operations)
    judged = clauses_of[True] | ({"M7"} if overlap and whole else set())
    aside = set(trace.leave_out) | set(unchecked)
    passed = sorted(judged - failed - clauses_of[False] - clauses_of[None] - aside)
    not_checked: dict[str, str] = {}
    excused: set[str] = set()
    for clause in everything:
        if clause in passed or clause in failed or clause in aside:
            continue
        if clause in clauses_of[None]:
            why = f"(the search ran out of its budget on {len(unknown)} of {len(parts)} part(s))"
        elif clause in clauses_of[False]:
            why = "(its calls are in a part of the trace that no order explains: not judged past it)"
        elif clause == "M7":
            why = (
                "(a trace shows atomicity only when it is explained whole)"
                if overlap
                else "(no two calls of different threads overlap in the trace)"
            )
        elif clause in NEVER_FROM_A_TRACE:
            why = NEVER_FROM_A_TRACE[clause]
            excused.add(clause)
        else:
            why = "(no call of the trace judged it)"
        not_checked[clause] = why
    gaps = {**unchecked, **{c: why for c, why in not_checked.items() if c not in excused}}
    return passed, not_checked, gaps


def _judged(trace: Trace) -> None:
    """The calls whose clause the header leaves out: any answer is accepted (they still take effect)."""
    component = COMPONENTS[trace.component]
    known = {*component.clauses, *component.groups, "M7"}
    unknown = [g for g in trace.leave_out if g not in known]
    if unknown:
        raise TraceFormatError(trace.path, 1, "leave_out", f"{unknown} are not clauses of {trace.component}")
    if not trace.leave_out:
        return
    trace.operations = [
        op if trace.clauses[op.line or 0] not in trace.leave_out or op.ret is None else _replace_result(op)
        for op in trace.operations
    ]


def _replace_result(op: Operation) -> Operation:
    return replace(op, result=ANYTHING)


def check_trace(
    component: str,
    path: str,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    source: Sequence[str] | None = None,
) -> TraceResult:
    """Judge the hicache-trace/1 file at ``path`` as ``component``'s history (O7).

    Raises :class:`~spec.oracle._trace_format.TraceFormatError` (an OracleUsageError) when the file is
    not hicache-trace/1, naming the line and the field.
    """
    started = time.perf_counter()
    trace = parse_trace(path, component, source)
    _judged(trace)
    spec = _spec(trace)
    part_of = _part_of(trace)
    groups: dict[Hashable, list[Operation]] = defaultdict(list)
    for op in sorted(trace.operations, key=lambda o: o.call):
        groups[None if part_of is None else part_of(op)].append(op)
    parts = [_Part(key, ops, check_history(ops, spec, max_steps)) for key, ops in groups.items()]
    failing = [p for p in parts if p.verdict.linearizable is False]
    unknown = [p for p in parts if p.verdict.linearizable is None]
    failures: list[Failure] = []
    shown: tuple[list[Operation], list[Operation], list[Operation]] = ([], [], [])
    for part in failing[:MINIMIZED_FAILURES]:
        failure, unexplained, needed = _failure(trace, part, spec, max_steps)
        failures.append(failure)
        if not shown[0]:
            shown = (unexplained, needed, part.operations)
    left_out = _left_out(trace)
    unchecked = unchecked_for_want(COMPONENTS[component], left_out, trace.leave_out)  # as the report has them
    failed = {c for f in failures for c in f.clauses}
    passed, not_checked, gaps = _coverage(trace, parts, failed, unchecked)
    details: dict[str, Any] = {"parts": len(parts)}
    details["unexplained"], details["needed"], details["context"] = shown
    also = unknown_why = ""
    if len(failing) > MINIMIZED_FAILURES:
        rest = ", ".join(repr(p.key) for p in failing[MINIMIZED_FAILURES:][:10])
        also = f"; {len(failing) - MINIMIZED_FAILURES} more part(s) unexplained too: {rest}"
    elif unknown and not failing:
        worst = max(unknown, key=lambda p: len(p.operations))
        unknown_why = (
            f"UNKNOWN: the search budget ({max_steps} steps per part, --max-steps) ran out on"
            f" {len(unknown)} of {len(parts)} part(s); the largest, {len(worst.operations)} calls"
            f"{'' if worst.key is None else f' on {worst.key!r}'}, after {worst.verdict.steps} steps and"
            f" {worst.verdict.configurations} configurations; the other parts were explained"
        )
        details["context"] = worst.operations
    figures = {
        "examples": 1,
        "calls": len(trace.operations),
        "threads": len({op.thread for op in trace.operations}),
        "parts": len(parts),
        "steps": sum(p.verdict.steps for p in parts),
        "distinct_states": sum(p.verdict.configurations for p in parts),
        "seconds": round(time.perf_counter() - started, 3),
    }
    found = Found(
        figures,
        failures,
        not_checked=not_checked,
        judged=passed,
        excused=frozenset(c for c in not_checked if c not in gaps),
        unknown=unknown_why,
        also=also,
        report=TraceResult,
        details=details,
    )
    subject = Subject(
        component=COMPONENTS[component],
        target=f"trace {path}",
        left_out=left_out,
        declared=_declared(trace),
        time_control=_time_control(trace),
        adapter=Adapter().as_dict(),
        whose="the trace's",
        groups=tuple(trace.leave_out),
    )
    result = build_result(subject, found, seed=0)
    assert isinstance(result, TraceResult)
    return result


def _time_control(trace: Trace) -> str:
    pinned = sum(op.now is not None for op in trace.operations)
    if trace.component != "metadata-cache":
        return "the trace's own intervals (real-time order only: this component reads no clock)"
    return (
        f"the trace's own clock: each call at an instant inside its [invoke, return] (O7), pinned by"
        f" its now for {pinned} of {len(trace.operations)} calls"
    )


def _declared(trace: Trace) -> dict[str, str]:
    defaults = {name: values[0] for name, values in COMPONENTS[trace.component].choices.items()}
    return {**defaults, **trace.declare}
