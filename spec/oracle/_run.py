"""``check()``: run a component's machine over a target and report PASS or FAIL with a reproduction.

A run has three phases, each a function of its own: preparation (:func:`prepared`: the component, the
target behind its adapter, the declared choices, the groups left out, the time and filesystem
interposed), a search (the sequential one, ``_sequential.search_sequential``; other modes are its
siblings over the same :class:`Prepared`), and the result (``_result.build_result``).
"""

from __future__ import annotations

import importlib
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from functools import reduce
from typing import Any

from ..machines._base import LockstepMachine
from ._adapter import Adapter
from ._components import COMPONENTS, Component
from ._errors import OracleUsageError, one_line
from ._result import OracleResult, build_result
from ._sequential import SearchBudget, machine_class, search_sequential
from ._session import Session
from ._settings import pinned
from ._timeout import CALL_TIMEOUT

__all__ = ["OracleResult", "OracleUsageError", "Prepared", "check", "load_target", "machine_for", "prepared"]


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


def _prepare(
    component: str,
    target: str | Callable[..., Any],
    adapter: Adapter | Mapping[str, Any] | None,
    declare: Mapping[str, str] | None = None,
    call_timeout: float | None = CALL_TIMEOUT,
    settings: Mapping[str, Any] | None = None,
) -> tuple[Component, Session, str]:
    if call_timeout is not None and (isinstance(call_timeout, bool) or not call_timeout > 0):
        raise OracleUsageError(f"call_timeout must be > 0 seconds, got {call_timeout!r}")
    if component not in COMPONENTS:
        raise OracleUsageError(f"unknown component {component!r}; known: {', '.join(COMPONENTS)}")
    pinned_settings = pinned(component, settings)  # OracleUsageError before anything is imported or built
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
    adapter, target_obj = _engine_form(spec_component, adapter, target_obj)
    # probes the target: OracleUsageError if unusable
    session = Session(spec_component, target_obj, adapter, call_timeout)
    session.declare(declare or {})
    session.settings = pinned_settings
    return spec_component, session, target_path


def _engine_form(
    component: Component, adapter: Adapter, target: Callable[..., Any]
) -> tuple[Adapter, Callable[..., Any]]:
    """O12: a file store in the engine's form (declared, or recognised by its constructor's parameters
    ``(storage_config, file_path)`` / ``(storage_config, kwargs)``) behind the component's interface."""
    from ._engine import engine_form, shim

    declared = adapter.form == "engine"
    if component.name != "file-store":
        if declared:
            raise OracleUsageError(f'--adapter form "engine" is for file-store targets, not {component.name}')
        return adapter, target
    if not (declared or engine_form(target)):
        return adapter, target
    return replace(adapter, form="engine"), shim(target)


@dataclass
class Prepared:
    """A run's first phase, done: the component, the session over the adapted target (its declared
    choices and the groups left out in ``session.left_out``), and the target's path for the report."""

    component: Component
    session: Session
    target_path: str


@contextmanager
def prepared(
    component: str,
    target: str | Callable[..., Any],
    *,
    adapter: Adapter | Mapping[str, Any] | None = None,
    declare: Mapping[str, str] | None = None,
    leave_out: Sequence[str] = (),
    call_timeout: float | None = CALL_TIMEOUT,
    settings: Mapping[str, Any] | None = None,
) -> Iterator[Prepared]:
    """Prepare a run (OracleUsageError when it cannot start) and, until the block ends, interpose the
    controlled time and filesystem in the target's modules and silence the targets' log lines up to ERROR
    (the file components' targets log every file they cannot remove; the oracle's faults make many).
    ``call_timeout``: the seconds a call to the target may take (``session.guard``, O8; None: no limit).
    ``settings``: the file store's configuration pinned (``--settings``, :mod:`spec.oracle._settings`)."""
    with ExitStack() as cleanup:
        cleanup.callback(logging.disable, logging.root.manager.disable)
        logging.disable(logging.ERROR)  # the engine's store logs each failed write at ERROR (O12)
        spec_component, session, target_path = _prepare(
            component, target, adapter, declare, call_timeout, settings
        )
        cleanup.callback(session.guard.close)
        for group in leave_out:
            if group not in spec_component.groups:
                known = ", ".join(sorted(spec_component.groups)) or "none"
                raise OracleUsageError(f"--leave-out {group}: not a group of {component} (groups: {known})")
            session.left_out[group] = f"{group}: left out on request (--leave-out)"
        cleanup.callback(session.patch())
        yield Prepared(spec_component, session, target_path)


def machine_for(
    component: str,
    target: str | Callable[..., Any],
    *,
    adapter: Adapter | Mapping[str, Any] | None = None,
    declare: Mapping[str, str] | None = None,
    settings: Mapping[str, Any] | None = None,
) -> type[LockstepMachine]:
    """The machine class the oracle runs for ``target``: the component's own machine over the adapted
    target, following the declared choices.  Reproduction files of the file components drive it step
    by step.  ``settings``: the configuration the run pinned (``--settings``)."""
    spec_component, session, _path = _prepare(component, target, adapter, declare, settings=settings)
    return machine_class(spec_component, session)


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
    call_timeout: float = CALL_TIMEOUT,
    settings: Mapping[str, Any] | None = None,
) -> OracleResult:
    """Check ``target`` against the spec of ``component`` with the project's own lock-step machine.

    ``target`` is an import path (``package.module:Class``) or the class/factory
    itself, called like the spec's constructor (through ``adapter``).  Runs at
    most ``max_examples`` examples of at most ``steps`` steps, starting no
    example after ``seconds`` (the run ends with the figures so far);
    deterministic for a given ``seed`` and budget.  ``progress`` receives a
    line about once a second after the first few seconds; ``run_clock`` is the
    clock the budget and the progress line read (tests pass a fake one).  The
    targets' log lines up to ERROR (a file store's, the engine's failed writes) are silenced for the run.
    Raises :class:`OracleUsageError` when the run cannot start.  ``leave_out`` sets clause groups aside
    (``--leave-out``); ``every_clause`` (default) goes on after a failure with its group set aside (O2).
    ``declare`` names the target's design choices (O3, ``--declare``: ``{"eviction": "lru"}`` for a
    metadata cache that evicts the least recently used, M6-lru); the spec follows them.
    ``call_timeout`` (``--call-timeout``, O8): a call to the target that does not return within it ends
    the run with a FAIL of the clause of the rule that made the call, naming the call and every thread's
    stack, instead of a hang.  ``settings`` (``--settings``, file-store only) pins the store's
    configuration, e.g. ``{"max_size": 10, "eviction_ratio": 1.0}``; the settings not given take the
    engine's defaults (F9: cap off, metadata cache off); unknown keys are an OracleUsageError.

    >>> from spec.models.metadata_cache import MetadataCacheSpec
    >>> check("metadata-cache", MetadataCacheSpec, max_examples=5, steps=5).verdict
    'PASS'
    """
    budget = SearchBudget(seed, max_examples, steps, seconds, progress, run_clock, every_clause)
    with prepared(
        component,
        target,
        adapter=adapter,
        declare=declare,
        leave_out=leave_out,
        call_timeout=call_timeout,
        settings=settings,
    ) as run:
        return build_result(run, search_sequential(run, budget), seed)
