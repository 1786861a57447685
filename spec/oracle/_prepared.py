"""A run's first phase, with nothing of the modes: the target loaded, adapted and probed (:class:`Prepared`).

:func:`prepared` checks the run's arguments, loads the target, puts it behind its adapter (and the engine
form's shim, O12), probes it once (``Session`` over the immutable ``Probe``), records the declared choices
and the groups left out, and interposes the controlled time and filesystem until the block ends.  Every
mode (the sequential search, ``--threads``, B1's constructor check, the reproductions) starts here; this
module imports none of them, which keeps the oracle's imports a tree.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from functools import reduce
from typing import Any

from ._adapter import Adapter
from ._components import COMPONENTS, Component
from ._errors import OracleUsageError, one_line
from ._session import Session
from ._settings import pinned
from ._timeout import CALL_TIMEOUT

__all__ = ["Prepared", "load_target", "prepare", "prepared"]


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


def prepare(
    component: str,
    target: str | Callable[..., Any],
    adapter: Adapter | Mapping[str, Any] | None,
    declare: Mapping[str, str] | None = None,
    call_timeout: float | None = CALL_TIMEOUT,
    settings: Mapping[str, Any] | None = None,
    leave_out: Sequence[str] = (),
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
    session = Session(
        spec_component,
        target_obj,
        adapter,
        call_timeout,
        declare=declare,
        leave_out=leave_out,
        settings=pinned_settings,
    )
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
        spec_component, session, target_path = prepare(
            component, target, adapter, declare, call_timeout, settings, leave_out
        )
        cleanup.callback(session.guard.close)
        cleanup.callback(session.patch())
        yield Prepared(spec_component, session, target_path)
