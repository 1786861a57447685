"""``hicache-oracle COMPONENT --describe``: what a target must provide, read off the oracle's own tables.

Everything printed comes from the :class:`~spec.oracle._components.Component` the run uses (its
constructor, required and optional methods and parameters with the reasons the report gives when they
are missing, its groups, its declared choices), the clause titles of :mod:`spec.conformance.clauses` and the
adapter's :data:`~spec.oracle._adapter.KEYS`; nothing here needs Hypothesis.  So the description cannot
drift from what a run does: a new optional method, group or choice shows here as it is added.
"""

from __future__ import annotations

import json
from typing import Any

from ..conformance.clauses import CLAUSE_ID, CLAUSES
from ._adapter import KEYS
from ._components import Component

__all__ = ["adapter_examples", "describe", "optional_clauses", "required_clauses", "summary_line"]

_TITLES = {clause.id: clause.title for clause in CLAUSES}

# The parameters the oracle supplies itself, and what it does for a target without them.
_SUPPLIED = {
    "clock": "the fake clock; without a clock parameter the oracle patches time.monotonic, time.time and "
    "time.perf_counter in your modules for the run",
    "fs": "the fake filesystem; without an fs parameter the oracle interposes os, os.path, shutil and "
    "open in your modules for the run",
}


def _clauses_in(why: str) -> list[str]:
    """The clauses a left-out reason carries: the IDs before its colon (as the report counts them)."""
    return CLAUSE_ID.findall(why.split(":", 1)[0])


def _titled(clauses: list[str]) -> str:
    return "; ".join(f"{c} ({_TITLES.get(c, '?')})" for c in clauses)


def optional_clauses(component: Component) -> dict[str, list[str]]:
    """Each optional method and parameter, with the clauses left unchecked without it."""
    optional = {**component.optional_parameters, **component.optional_methods}
    return {name: _clauses_in(why) for name, why in optional.items()}


def required_clauses(component: Component) -> list[str]:
    """The component's clauses that no optional method or parameter carries: the required methods'."""
    carried = {c for clauses in optional_clauses(component).values() for c in clauses}
    return [c for c in component.clauses if c not in carried]


def _signature(component: Component, method: str) -> str:
    receiver = f"{component.child}(name)." if method in component.child_methods else ""
    return f"{receiver}{method}({', '.join(component.methods.get(method, ()))})"


def _constructor(component: Component) -> str:
    first, *rest = component.constructor
    return f"target({', '.join([first, *(f'{p}=...' for p in rest)])})"


def adapter_examples(component: Component) -> dict[str, dict[str, Any]]:
    """One ``--adapter`` example per key that applies to ``component``, in its own names."""
    method = component.required[-1]
    pairs = [m for m, params in component.methods.items() if len(params) >= 2]
    reordered = (pairs[0], list(reversed(component.methods[pairs[0]]))) if pairs else None
    constructor = list(component.constructor)
    keyword = "clock" if "clock" in constructor else constructor[0]
    renamed = "timer" if keyword == "clock" else f"my_{keyword}"
    examples: dict[str, dict[str, Any]] = {
        "methods": {"methods": {method: f"my_{method}"}},
        "arguments": {"arguments": {"__init__": {keyword: renamed}}},
        "positional": {"positional": dict([reordered] if reordered else [("__init__", constructor[:2])])},
        "form": {"form": "per-pool"},
        "omit": {"omit": [next(iter(component.optional_parameters or component.optional_methods))]},
    }
    if not component.pooled:
        del examples["form"]
    return examples


def summary_line(component: Component) -> str:
    """One line for ``--list``: the spec, the constructor and the required methods."""
    letters = sorted({c[0] for c in component.clauses or (component.constructor_clause,)})
    required = ", ".join(_signature(component, m) for m in component.required)
    return f"SEMANTICS {'/'.join(letters)}; {_constructor(component)} with {required}"


def describe(component: Component) -> str:
    """The text of ``hicache-oracle COMPONENT --describe``."""
    constructor_clause = component.constructor_clause
    lines = [
        f"{component.name}: checked against {component.spec_path} by the machine {component.machine_path}",
        f"  clauses: {', '.join(component.clauses) or 'not listed (a FAIL names the clause it breaks)'}"
        " (docs/SEMANTICS.md)",
        "",
        f"Constructor ({constructor_clause}: {_TITLES.get(constructor_clause, '?')}):",
        f"  {_constructor(component)}",
    ]
    for parameter in component.constructor:
        if parameter in _SUPPLIED:
            lines.append(f"    {parameter}: optional; the oracle passes {_SUPPLIED[parameter]}")
        elif parameter in component.optional_parameters:
            lines.append(f"    {parameter}: optional; without it: {component.optional_parameters[parameter]}")
    lines += [
        "",
        "Required methods (a target without one is a usage error, exit 2), each with the clauses its answers"
        " are checked against (the first its own, blamed without a snapshot()):",
    ]
    width = max(len(_signature(component, m)) for m in component.required)
    for method in component.required:
        answers = component.method_clauses.get(method, ())
        lines.append(f"  {_signature(component, method).ljust(width)}  {', '.join(answers) or '-'}")
    lines.append(f"  together they carry: {_titled(required_clauses(component)) or 'every clause'}")
    lines += ["", "Optional methods (checked when present; left out, and said so in the report, when not):"]
    clauses = optional_clauses(component)
    width = max((len(_signature(component, m)) for m in component.optional_methods), default=0)
    for method, why in component.optional_methods.items():
        own = [c for c in component.method_clauses.get(method, ()) if c not in clauses[method]]
        carried = ", ".join([*clauses[method], *own])
        carried = f"{carried}: " if carried else ""
        signature = _signature(component, method).ljust(width)
        lines.append(f"  {signature}  {carried}without it, {why.split(': ', 1)[-1]}")
    if component.registry_methods:
        lines.append(f"  on the registry as well as on its pools: {', '.join(component.registry_methods)}")
    lines += ["", "Groups --leave-out GROUP sets aside (check(..., leave_out=[...])):"]
    lines += [f"  {group}  {_TITLES.get(group, '?')}" for group in sorted(component.groups)] or ["  none"]
    lines += ["", "Design choices --declare CHOICE=VALUE (check(..., declare={...})), the default first:"]
    lines += [f"  {name}={'|'.join(values)}" for name, values in component.choices.items()] or ["  none"]
    lines += ["", "Adapter keys (--adapter JSON, or check(..., adapter=Adapter(...))):"]
    for key, example in adapter_examples(component).items():
        lines += [f"  {key}: {KEYS[key]}", f"    e.g. --adapter '{json.dumps(example)}'"]
    return "\n".join(lines)
