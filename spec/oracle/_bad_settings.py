"""B1 of the constructors: every bad setting a component's clauses name, tried through the target's own
constructor form, so that a target with another constructor is held to B1 too.

The machine module of each component lists what to try (``BAD_SETTINGS``: a label and the spec-level
constructor arguments in place of the probe's), the spec says which error each one is and the parameter
its message names (``Component.settings_spec``, e.g. ``spec.models.metadata_cache:refuse_bad_settings``): the
oracle builds the target once per setting, as the probe builds it (the fake clock and filesystem of a
run), and requires that error, naming the parameter.  A target that accepts a bad setting, or refuses it
with another exception or a message that does not name it, FAILs B1 with the constructor call as its
counterexample.  A setting the target's constructor form cannot express (a parameter it does not take,
or that the adapter omits; the clock of a target whose time is patched) is not tried, and the report
says so (``bad_inputs_not_tried``).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..machines._base import BadSetting, names_any, parameter_named, refusal
from ..world.clock import CountingClock
from ..world.filesystem import FakeFileSystem
from ._components import Component
from ._errors import OracleUsageError, one_line
from ._prepared import prepared
from ._result import Failure, failure_entry
from ._session import Session, _signature_of
from ._timeout import CallTimedOut

__all__ = ["SettingsTried", "construct", "try_bad_settings"]

_SUPPLIED = ("clock", "stats")  # passed by the oracle itself, not among the probe's arguments


@dataclass
class SettingsTried:
    """What the constructor check did: the labels tried (``constructor ...``), those it could not try with
    why, and the failure of the first setting the target let through (None: it refused every one)."""

    tried: list[str] = field(default_factory=list)
    not_tried: dict[str, str] = field(default_factory=dict)
    failure: Failure | None = None


def _load(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def _unexpressed(session: Session, settings: Mapping[str, Any]) -> str:
    """Why the target's constructor form cannot take ``settings`` ("" when it can)."""
    component = session.component
    constructor = component.constructor
    positional = session.adapter.translate("__init__", {p: p for p in constructor}, constructor[:1]).args
    for parameter in settings:
        if session.probe.form == "engine" and parameter in ("storage_dir", "namespace"):
            return f"the engine form (O12) makes the {parameter} itself (the engine takes a storage_config)"
        if session.probe.form == "engine" and parameter == "extra_config":
            from ._engine import untried_settings

            untried = untried_settings(settings[parameter])
            if untried:
                return f"the engine form (O12): {untried} are no settings of the engine's, which ignores them"
        if parameter in session.adapter.omit:
            return f"the adapter omits {parameter}"
        if parameter == "clock" and session.time_control != "injected":
            return "the target takes no clock (the oracle patches its time)"
        if parameter == "stats" and not session.counters_on:
            return "the target's constructor takes no stats"
        if parameter in _SUPPLIED:
            continue
        if parameter not in constructor:
            return f"{component.name}'s constructor has no {parameter}"
        if parameter not in positional and (parameter in session.left_out or not session.accepts(parameter)):
            return f"the target's constructor takes no {parameter}"
    return ""


class _Named:
    """An argument shown by name in a counterexample (``fs``, ``clock``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


def _call(session: Session, settings: Mapping[str, Any]) -> tuple[Any, str, dict[str, Any]]:
    """The constructor call for ``settings`` over the probe's arguments: (call, its text, the arguments)."""
    component = session.component
    init = {k: v for k, v in component.probe_arguments().items() if k not in session.left_out}
    init.update({k: v for k, v in settings.items() if k not in _SUPPLIED})
    timed = "clock" in component.constructor
    if timed:
        session.holder.clock = CountingClock(0.0)
    init = session.fs_control.take(init)
    call = session.constructor_call(init, session.holder if timed else None)
    shown = {  # the fake filesystem and the probe's callbacks by their names
        k: _Named(k) if isinstance(v, FakeFileSystem) or inspect.isfunction(v) else v for k, v in init.items()
    }
    text_call = session.constructor_call(shown, _Named("clock") if timed else None)
    for parameter in _SUPPLIED:
        if parameter in settings:
            keyword = session.adapter.keyword_of("__init__", parameter)
            call.kwargs[keyword] = text_call.kwargs[keyword] = settings[parameter]
    parts = [repr(a) for a in text_call.args] + [f"{k}={v!r}" for k, v in text_call.kwargs.items()]
    return call, f"target({', '.join(parts)})", {**init, **settings}


def _own_names(session: Session, parameter: str) -> set[str]:
    """The target's own names for the constructor ``parameter``: the adapter's keyword, or the name of the
    constructor's parameter that takes it positionally."""
    names = {session.adapter.keyword_of("__init__", parameter)}
    constructor = session.component.constructor
    if parameter in constructor:
        call = session.adapter.translate("__init__", {p: p for p in constructor}, constructor[:1])
        signature = _signature_of(session.target)
        if parameter in call.args and signature is not None:
            positional = list(signature.parameters)
            index = call.args.index(parameter)
            names |= {positional[index]} if index < len(positional) else set()
    return names


def _spec_refusal(component: Component, arguments: Mapping[str, Any]) -> Exception | None:
    spec: Callable[..., object] = _load(component.settings_spec)
    taken = inspect.signature(spec).parameters
    return refusal(lambda: spec(**{k: v for k, v in arguments.items() if k in taken}))


def try_bad_settings(session: Session, target_path: str) -> SettingsTried:
    """B1: build the target with each bad setting of its component; the first it does not refuse as the
    spec does is the failure (the others are still tried, and listed)."""
    component, out = session.component, SettingsTried()
    if not component.bad_settings:
        return out
    settings: tuple[BadSetting, ...] = _load(component.bad_settings)
    for bad in settings:
        label = f"constructor {bad.label}"
        why = _unexpressed(session, bad.settings)
        if why:
            out.not_tried[label] = why
            continue
        call, text, arguments = _call(session, bad.settings)
        want = _spec_refusal(component, arguments)
        if want is None:
            raise RuntimeError(f"B1: the spec takes {bad.label}: it is no bad setting (the machine's list)")
        out.tried.append(label)
        named = parameter_named(want)  # a setting inside extra_config is named as the setting (F9)
        names = {named} | (_own_names(session, named) if named in bad.settings else set())
        problem = _verdict(session, call, text, want, names)
        if problem and out.failure is None:
            out.failure = _failure(session, bad, text, problem, want, names, target_path)
    return out


def _verdict(session: Session, call: Any, text: str, want: Exception, names: set[str]) -> str:
    """What the target did wrong with a bad setting ("" when it refused it as the spec does)."""
    error = type(want).__name__
    try:
        session.guard.run(lambda: session.target(*call.args, **call.kwargs), text)
    except CallTimedOut:
        return "did not return"
    except Exception as other:  # the target's answer, whatever it raised
        if not isinstance(other, type(want)):
            return f"raised {one_line(other)}"
        if not names_any(str(other), names):
            return f"raised {one_line(other)}, which names none of {', '.join(sorted(names))}"
        return ""
    return f"raised nothing ({error} expected)"


def _failure(
    session: Session,
    bad: BadSetting,
    text: str,
    problem: str,
    want: Exception,
    names: set[str],
    target_path: str,
) -> Failure:
    expected = f"the spec raises {type(want).__name__} naming {' or '.join(sorted(names))}"
    name = target_path.rpartition(":")[2] if ":" in target_path else "target"  # not a repr
    call = f"{name}{text.removeprefix('target')}"
    message = f"B1: {call} {problem}; {expected} ({want})"
    lines = [f"cache = {call}  # {problem}; {expected}"]
    repro = render_settings_repro(session, bad, type(want).__name__, names, target_path)
    return failure_entry(["B1"], message, 1, lines, repro)


def _literal(value: Any) -> str:
    """``value`` as Python source (a float's ``nan`` and ``inf`` included)."""
    if isinstance(value, float) and value != value:
        return "float('nan')"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return f"float({str(value)!r})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def render_settings_repro(
    session: Session, bad: BadSetting, error: str, names: set[str], target_path: str
) -> str:
    """A pytest file in which the target's constructor, given the bad setting, must raise ``error`` naming
    the parameter (B1); it builds the target as the oracle does (``spec.oracle.construct``)."""
    component = session.component
    settings = "{" + ", ".join(f"{k!r}: {_literal(v)}" for k, v in bad.settings.items()) + "}"
    pattern = "|".join(sorted(names))
    lines = [
        f'"""Reproduction (B1, Bad input, everywhere): {component.name} built with {bad.label}.',
        "",
        "The constructor must refuse the setting before building anything, with the error the spec",
        "raises and a message that names the parameter.  Run with pytest;",
        "HICACHE_ORACLE_TARGET=package.module:Name runs it against another implementation.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "import os",
        "",
        "import pytest",
        "",
        f"from {__package__} import construct",  # spec.oracle here, hicache_spec.oracle installed
        "",
        f"TARGET = os.environ.get('HICACHE_ORACLE_TARGET', {target_path!r})",
        f"ADAPTER = {session.adapter.as_dict()!r}",
        "",
        "",
        f"def test_{component.name.replace('-', '_')}_refuses_a_bad_setting_b1() -> None:",
        f"    with pytest.raises({error}, match=r'\\b(?:{pattern})\\b'):",
        f"        construct({component.name!r}, TARGET, {settings}, adapter=ADAPTER)",
    ]
    return "\n".join(lines) + "\n"


def construct(
    component: str,
    target: str | Callable[..., Any],
    settings: Mapping[str, Any],
    *,
    adapter: Mapping[str, Any] | None = None,
) -> Any:
    """Build ``target`` as the oracle builds it for ``component`` (the probe's arguments, with the fake
    clock and filesystem of a run), with ``settings`` (spec-level constructor arguments) in place of the
    probe's; what the target raises is raised.  The reproductions of B1's constructor failures call it."""
    with prepared(component, target, adapter=adapter) as run:
        why = _unexpressed(run.session, settings)
        if why:
            raise OracleUsageError(f"cannot pass {dict(settings)!r}: {why}")
        call, _text, _arguments = _call(run.session, settings)
        return run.session.target(*call.args, **call.kwargs)
