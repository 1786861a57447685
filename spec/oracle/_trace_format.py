"""hicache-trace/1, read exactly as docs/SEMANTICS.md pins it (O7): a malformed line is a usage error.

The reader turns each call line into an
:class:`~spec.linearizability.checker.Operation` in the spec's own terms (JSON
lists become tuples, so keys hash; a batch's keys become the operation's
arguments, as the linearizability specs step them), keeping its line number.
Everything it refuses is a :class:`TraceFormatError` naming the line and the
field: the command line prints it and exits 2, never with a traceback.
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from ..linearizability.checker import PENDING, Operation, Raised
from ._errors import OracleUsageError

__all__ = [
    "FORMAT",
    "TRACE_COMPONENTS",
    "Trace",
    "TraceFormatError",
    "parse_trace",
]

FORMAT = "hicache-trace/1"


@dataclass(frozen=True)
class _Method:
    """A call a trace may carry: how many positional arguments, which are lists, and its clause."""

    clause: str
    arity: tuple[int, int]  # the fewest and the most arguments
    lists: tuple[int, ...] = ()  # the positions that must be JSON arrays
    ints: tuple[int, ...] = ()  # the positions that must be JSON integers
    batch: bool = False  # the keys (one list) become the operation's arguments


_KEY = _Method("", (1, 1))
_METADATA = {
    "add": _Method("M3", (1, 1)),
    "contains": _Method("M4", (1, 1)),
    "remove": _Method("M5", (1, 1)),
    "clear": _Method("M5", (0, 0)),
    "len": _Method("M5", (0, 0)),
    **{
        m: _Method("M9", (1, 1), (0,), batch=True)
        for m in ("add_many", "contains_many", "contains_prefix", "remove_many")
    },
}
_EXISTENCE = {
    "add": _Method("E2", (2, 2), (1,)),
    "contains": _Method("E3", (2, 2)),
    "contains_all": _Method("E4", (2, 2), (1,)),
    "covers_all": _Method("E5", (2, 3), (1, 2)),
    "invalidate_beyond": _Method("E6", (3, 3), (1,), (2,)),
    "clear": _Method("E7", (0, 0)),
    "len": _Method("E7", (0, 0)),
}
_POOLS = {
    "pool.add": _Method("P2", (2, 2), (1,)),
    "pool.contains": _Method("P2", (2, 2)),
    "pool.contains_all": _Method("P2", (2, 2), (1,)),
    "pool.invalidate_beyond": _Method("P2", (3, 3), (1,), (2,)),
    "pool.len": _Method("P2", (1, 1)),
    "pool.track_inflight": _Method("P3", (2, 2), (1,)),
    "pool.untrack_inflight": _Method("P3", (2, 2), (1,)),
    "pool.covered": _Method("P4", (2, 2), (1,)),
    "pool.clear": _Method("P5", (1, 1)),
    "pool.clear_inflight": _Method("P5", (1, 1)),
    "clear": _Method("P5", (0, 0)),
    "clear_inflight": _Method("P5", (0, 0)),
}
# The calls a trace may carry that the search does not judge (their answers are snapshots or counters,
# which a trace cannot pin to one state): reported as not checked, with how many there were.
UNCHECKED = {
    "metadata-cache": {"stats": "M8", "snapshot": "snapshot", "check_invariants": "check_invariants"},
    "existence-cache": {"snapshot": "snapshot", "check_invariants": "check_invariants"},
    "pool-beliefs": {
        "snapshot": "snapshot",
        "pool.snapshot": "snapshot",
        "check_invariants": "check_invariants",
        "pool.check_invariants": "check_invariants",
    },
}
TRACE_COMPONENTS: dict[str, dict[str, _Method]] = {
    "metadata-cache": _METADATA,
    "existence-cache": _EXISTENCE,
    "pool-beliefs": _POOLS,
}
# The constructor's keyword arguments by their Python names: (default, the check of a value).
_CHOICES = {
    "metadata-cache": {"eviction": ("birth", "lru")},
    "existence-cache": {"bound": ("global", "per-pool")},
}


class TraceFormatError(OracleUsageError):
    """A trace that is not hicache-trace/1: the line (from 1) and the field that is wrong."""

    def __init__(self, path: str, line: int, field_name: str | None, what: str) -> None:
        where = f"{path}:{line}" + (f": field {field_name!r}" if field_name else "")
        super().__init__(f"{where}: {what}")
        self.line, self.field = line, field_name


@dataclass
class Trace:
    """A parsed trace: its header's settings, its calls as operations, and what it carried unchecked."""

    path: str
    component: str
    header: str  # line 1 as written
    config: dict[str, Any]
    declare: dict[str, str]
    leave_out: list[str]
    operations: list[Operation]
    clauses: dict[int, str]  # line -> the clause its call's answer is promised by
    texts: dict[int, str]  # line -> the line as written
    unchecked: dict[str, int] = field(default_factory=dict)  # op -> how many calls were not judged
    ignored_config: list[str] = field(default_factory=list)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _frozen(value: Any, fail: Any) -> Hashable:
    """A JSON value as a hashable argument (arrays become tuples); an object is refused."""
    if isinstance(value, list):
        return tuple(_frozen(v, fail) for v in value)
    if isinstance(value, dict):
        fail("args", "a JSON object is not a key or a page hash")
    return value  # type: ignore[no-any-return]


def _header(
    path: str, text: str, component: str
) -> tuple[dict[str, Any], dict[str, str], list[str], list[str]]:
    def fail(name: str | None, what: str) -> NoReturn:
        raise TraceFormatError(path, 1, name, what)

    try:
        header = json.loads(text)
    except json.JSONDecodeError as error:
        raise TraceFormatError(path, 1, None, f"not JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(header, dict):
        fail(None, f"the header must be a JSON object, got {type(header).__name__}")
    if header.get("format") != FORMAT:
        fail("format", f"must be {FORMAT!r}, got {header.get('format')!r}")
    if header.get("component") != component:
        fail(
            "component",
            f"the trace is of {header.get('component')!r}; the command line asked for {component!r}",
        )
    config = header.get("config", {})
    if not isinstance(config, dict):
        fail("config", f"must be a JSON object of constructor arguments, got {type(config).__name__}")
    settings, ignored = _config(component, config, fail)
    declare = header.get("declare") or {}
    if not isinstance(declare, dict):
        fail("declare", "must be a JSON object of CHOICE: VALUE")
    known = _CHOICES.get(component, {})
    for name, value in declare.items():
        if name not in known or value not in known[name]:
            allowed = ", ".join(f"{c}={'|'.join(v)}" for c, v in known.items()) or "none for this component"
            fail("declare", f"{name}={value!r} is not a choice of {component} (choices: {allowed})")
    leave_out = header.get("leave_out") or []
    if not isinstance(leave_out, list) or not all(isinstance(g, str) for g in leave_out):
        fail("leave_out", "must be a JSON array of clause IDs or group names")
    return settings, dict(declare), list(leave_out), ignored


def _config(component: str, config: Mapping[str, Any], fail: Any) -> tuple[dict[str, Any], list[str]]:
    """The spec's settings from the constructor's keyword arguments (M1, E1, P1 say which are valid)."""
    settings: dict[str, Any] = {}
    bound = config.get("max_entries")
    if component == "metadata-cache":
        if "ttl_seconds" not in config:
            fail("config", "metadata-cache needs ttl_seconds (-1 or a finite number >= 0)")
        ttl = config["ttl_seconds"]
        if not _is_number(ttl) or not (ttl == -1 or ttl >= 0):
            fail("config", f"ttl_seconds must be -1 or a finite number >= 0 (M1), got {ttl!r}")
        settings["ttl_seconds"] = float(ttl)
        if bound is not None and (not isinstance(bound, int) or isinstance(bound, bool) or bound < 1):
            fail("config", f"max_entries must be null or an integer >= 1 (M1), got {bound!r}")
        settings["max_entries"] = bound
        known = {"ttl_seconds", "max_entries", "clock", "eviction"}
    else:
        if component == "existence-cache" and "max_entries" not in config:
            bound = 512 * 1024
        if not isinstance(bound, int) or isinstance(bound, bool) or bound < 0:
            fail("config", f"max_entries must be an integer >= 0 ({component[0].upper()}1), got {bound!r}")
        settings["max_entries"] = bound
        known = {"max_entries"}
    return settings, sorted(set(config) - known)


def _call(path: str, number: int, text: str, methods: Mapping[str, _Method]) -> tuple[Operation, str] | str:
    """The operation of one call line and its clause; or the op's name, when it is one not judged."""

    def fail(name: str | None, what: str) -> NoReturn:
        raise TraceFormatError(path, number, name, what)

    try:
        call = json.loads(text)
    except json.JSONDecodeError as error:
        raise TraceFormatError(
            path, number, None, f"not JSON ({error.msg} at column {error.colno})"
        ) from None
    if not isinstance(call, dict):
        fail(None, f"a call must be a JSON object, got {type(call).__name__}")
    for name in ("thread", "op", "invoke"):
        if name not in call:
            fail(name, "missing")
    thread, op = call["thread"], call["op"]
    if isinstance(thread, bool) or not isinstance(thread, (int, str)):
        fail("thread", f"must be an integer or a string, got {thread!r}")
    if not isinstance(op, str):
        fail("op", f"must be a string, got {op!r}")
    method = methods.get(op)
    if method is None:
        return op
    args = call.get("args", [])
    if not isinstance(args, list):
        fail("args", f"must be a JSON array, got {type(args).__name__}")
    low, high = method.arity
    if not low <= len(args) <= high:
        fail("args", f"{op} takes {low if low == high else f'{low} to {high}'} arguments, got {len(args)}")
    for position in method.lists:
        if position < len(args) and not isinstance(args[position], list):
            fail("args", f"argument {position} of {op} must be a JSON array, got {args[position]!r}")
    for position in method.ints:
        if isinstance(args[position], bool) or not isinstance(args[position], int):
            fail("args", f"argument {position} of {op} must be an integer, got {args[position]!r}")
    invoke, ret, now = call["invoke"], call.get("return"), call.get("now")
    for name, value in (("invoke", invoke), ("return", ret), ("now", now)):
        if value is not None and not _is_number(value):
            fail(name, f"must be a finite number of seconds, got {value!r}")
    if ret is not None and ret < invoke:
        fail("return", f"{ret} is before invoke {invoke}")
    if now is not None and not (invoke <= now and (ret is None or now <= ret)):
        fail("now", f"{now} is outside the call's [invoke, return] = [{invoke}, {ret}]")
    raised = call.get("error")
    if raised is not None and not isinstance(raised, str):
        fail("error", f"must be the exception's type name, got {raised!r}")
    if ret is not None and raised is None and "result" not in call:
        fail("result", "missing (a call that returned has a result, or an error if it raised)")
    frozen = tuple(_frozen(a, fail) for a in args)
    if method.batch:
        frozen = tuple(frozen[0])  # type: ignore[arg-type]
    result = PENDING if ret is None else Raised(raised) if raised is not None else call.get("result")
    return Operation(thread, op, frozen, result, float(invoke), ret, now, number), method.clause


def _lines(source: Iterable[str]) -> Iterable[tuple[int, str]]:
    for number, raw in enumerate(source, 1):
        text = raw.strip()
        if text:
            yield number, text


def parse_trace(path: str, component: str, source: Iterable[str] | None = None) -> Trace:
    """Read the trace at ``path`` (or the lines of ``source``) as ``component``'s: TraceFormatError if it
    is not hicache-trace/1."""
    if component not in TRACE_COMPONENTS:
        known = ", ".join(TRACE_COMPONENTS)
        raise OracleUsageError(f"--trace checks the components {known}; {component!r} is not one of them")
    if source is None:
        try:
            with open(path, encoding="utf-8") as handle:
                return parse_trace(path, component, handle.readlines())
        except OSError as error:
            raise OracleUsageError(f"cannot read the trace {path}: {error.strerror or error}") from None
        except UnicodeDecodeError as error:
            raise OracleUsageError(f"{path} is not UTF-8 text: {error.reason}") from None
    lines = iter(_lines(source))
    first = next(lines, None)
    if first is None:
        raise TraceFormatError(path, 1, None, "the file is empty: line 1 must be the header")
    if first[0] != 1:
        raise TraceFormatError(path, 1, None, "line 1 must be the header, not blank")
    config, declare, leave_out, ignored = _header(path, first[1], component)
    methods = TRACE_COMPONENTS[component]
    trace = Trace(path, component, first[1], config, declare, leave_out, [], {}, {}, ignored_config=ignored)
    for number, text in lines:
        parsed = _call(path, number, text, methods)
        if isinstance(parsed, str):
            if parsed not in UNCHECKED[component]:
                known = ", ".join(sorted(methods))
                raise TraceFormatError(
                    path, number, "op", f"{parsed!r} is not a call of {component} ({known})"
                )
            trace.unchecked[parsed] = trace.unchecked.get(parsed, 0) + 1
            continue
        operation, clause = parsed
        trace.operations.append(operation)
        trace.clauses[number] = clause
        trace.texts[number] = text
    return trace
