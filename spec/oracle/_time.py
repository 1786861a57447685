"""Time under the oracle's control: inject the fake clock, or patch the target module's ``time``.

A target whose constructor takes a clock gets the run's clock (``world.clock.CountingClock``).  A target
that reads ``time.monotonic()`` / ``time.time()`` itself gets, for the duration
of the run, a stand-in for the ``time`` module (and for any of its functions
imported by name) in the globals of every module that may read the clock for it
(``time_modules``: the factory's module and the module of every class in the
instance's MRO, the standard library left out).  The global ``time`` module is
never touched, so Hypothesis and the rest of the process keep the real clock.

``control_time`` and ``time_modules`` are copied verbatim into generated
reproduction files (they are self-contained on purpose), with a clock of their own
(``_repro.FAKE_CLOCK_SOURCE``).
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ._errors import OracleUsageError

__all__ = [
    "MISSING",
    "ClockHolder",
    "Interpose",
    "Interposition",
    "bound_clocks",
    "control_time",
    "restore",
    "time_modules",
]


def control_time(module: ModuleType, read: Callable[[], float]) -> dict[str, Any]:
    """Point ``module``'s view of ``time.monotonic``/``time.time``/``perf_counter`` at ``read``.

    Returns the globals it replaced (name -> original) so the caller can restore them.
    """
    import time as real

    clocks = ("monotonic", "time", "perf_counter")
    fake_time = ModuleType("time", "the oracle's controlled view of the time module")
    fake_time.__dict__.update({k: v for k, v in vars(real).items() if not k.startswith("__")})
    for name in clocks:
        setattr(fake_time, name, read)
        setattr(fake_time, name + "_ns", lambda: int(read() * 1e9))
    replaced: dict[str, Any] = {}
    for name, value in list(vars(module).items()):
        if value is real:
            replaced[name] = value
            setattr(module, name, fake_time)
        elif any(value is getattr(real, c) for c in clocks):
            replaced[name] = value
            setattr(module, name, read)
    return replaced


def time_modules(obj: Any) -> list[ModuleType]:
    """The modules whose view of the time reaches ``obj``: its own module (a factory's, a class's) and the
    module of every class in its MRO (of ``obj`` itself for a class, of its type for an instance), in that
    order, without repeats; the standard library and modules not imported are left out.
    """
    import sys

    classes = obj.__mro__ if isinstance(obj, type) else type(obj).__mro__
    names = [getattr(obj, "__module__", None), *(getattr(c, "__module__", None) for c in classes)]
    # O12: the engine form's shim names what it calls (the engine's class, its instance's parts)
    names += [
        getattr(c, "__module__", None) for c in getattr(obj, "__dict__", {}).get("__oracle_reaches__", ())
    ]
    if not isinstance(obj, type):
        names += [getattr(c, "__module__", None) for c in getattr(type(obj), "__oracle_reaches__", ())]
    modules: list[ModuleType] = []
    for name in names:
        if not isinstance(name, str) or name.partition(".")[0] in sys.stdlib_module_names:
            continue
        module = sys.modules.get(name)
        if module is not None and module not in modules:
            modules.append(module)
    return modules


MISSING: Any = object()  # what ``restore`` takes for a global the stand-ins added (the builtin ``open``)


def restore(module: ModuleType, replaced: dict[str, Any]) -> None:
    """Put back the globals of ``module`` that ``replaced`` records (name -> original, or MISSING)."""
    namespace = vars(module)
    for name, value in replaced.items():
        if value is MISSING:
            namespace.pop(name, None)
        else:
            namespace[name] = value


Interpose = Callable[[ModuleType], dict[str, Any]]  # puts stand-ins into a module: what it replaced


class Interposition:
    """Stand-ins in the globals of the target's ``modules`` (the time's, the filesystem's), until undone;
    ``names``: module name -> the names replaced there.  Inactive (the fake is passed), it does nothing."""

    def __init__(self, active: bool, modules: list[ModuleType], interpose: Interpose) -> None:
        self.active = active
        self.modules = modules if active else []
        self.names: dict[str, list[str]] = {}
        self._interpose = interpose
        self._in = False

    def _around(self, on: bool) -> None:
        """Told when the stand-ins go in and come out."""

    def patch(self) -> Callable[[], None]:
        """Put the stand-ins in (a no-op while they are in: check() patches for the whole run); the undo."""
        if not self.active or self._in:
            return lambda: None
        done = [(module, self._interpose(module)) for module in self.modules]
        names = {m.__name__: sorted(n for n, v in put.items() if v is not MISSING) for m, put in done}
        self.names = {module: found for module, found in names.items() if found}
        self._in = True
        self._around(True)

        def undo() -> None:
            self._around(False)
            for module, replaced in reversed(done):
                restore(module, replaced)
            self._in = False

        return undo

    def reach(self, instances: list[Any], out_of_reach: str) -> None:
        """Also the modules of ``instances``' classes; OracleUsageError(``out_of_reach``, its ``%s`` the
        modules searched) when none of the modules has a name to replace: the target is out of reach."""
        if not self.active:
            return
        found = (m for obj in instances if obj is not None for m in time_modules(obj))
        self.modules = list(dict.fromkeys([*self.modules, *found]))
        self.patch()()  # learns names
        if not self.names:
            searched = ", ".join(m.__name__ for m in self.modules) or "none importable"
            raise OracleUsageError(out_of_reach % searched)

    def where(self) -> str:
        """The names replaced, for the report: ``monotonic, time in module m; ...``."""
        return "; ".join(f"{', '.join(n)} in module {m}" for m, n in self.names.items())


class ClockHolder:
    """The clock the target reads (passed to it, or behind its patched module): the oracle points it at
    each example's FakeClock.  It counts the target's reads, so the report's claim that the target ran
    on the fake clock is checked, not assumed (O4); the oracle itself reads ``clock`` directly."""

    def __init__(self) -> None:
        self.clock: Callable[[], float] = time.monotonic
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return self.clock()


def bound_clocks(target: Any) -> dict[str, str]:
    """The parameters of the constructor the oracle calls (a factory, or a class's ``__init__``) whose
    default is a clock of the ``time`` module bound at import (``timer=time.monotonic``): patching the
    module's names cannot reach them.  Parameter name -> how the report shows it,
    ``Cache.__init__(timer=time.monotonic)``.  (Other clocks kept out of reach show in the count of
    reads.)"""
    clocks = [getattr(time, name) for name in ("monotonic", "time", "perf_counter")]
    function = getattr(target, "__init__", None) if isinstance(target, type) else target
    try:
        parameters = inspect.signature(function).parameters.values()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return {}
    name = getattr(function, "__qualname__", repr(function))
    return {
        p.name: f"{name}({p.name}=time.{p.default.__name__})"
        for p in parameters
        if any(p.default is clock for clock in clocks)
    }
