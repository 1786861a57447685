"""Driving a target through an adapter: the recording proxy, time control and replay.

The machines call what they believe is an implementation; the oracle hands them
a ``TargetProxy`` instead.  The proxy translates every spec-level call into the
target's API (through the :class:`~spec.oracle.Adapter`), reads the fake time,
and records ``Call``s: the trace of the current example.  When a machine fails,
the trace of the example Hypothesis shrank it to is replayed against a fresh
target and a fresh spec, and cut down to the fewest calls whose last still
diverges.  The reproduction file is written from it.
"""

from __future__ import annotations

import inspect
from collections import ChainMap
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from hypothesis import reject

from ..machines._base import names_any, parameter_named
from ..world.clock import CountingClock
from ._adapter import Adapter, TargetCall
from ._errors import OracleUsageError, one_line
from ._fs import FsControl
from ._probe import Probe, offered
from ._time import ClockHolder, Interposition, bound_clocks, control_time, time_modules
from ._timeout import CALL_TIMEOUT, CallGuard, CallTimedOut

if TYPE_CHECKING:
    from ._components import Component

__all__ = [
    "UNGUARDED",
    "Call",
    "ConstructorRefused",
    "OneShot",
    "PerPoolRegistry",
    "Recording",
    "Replay",
    "Searching",
    "Session",
    "minimize",
    "replay",
]

# The threads mode's: its workers call the target themselves, under the scheduler's deadline (O8), where
# a session's guard would make every call from its one worker thread.
UNGUARDED = CallGuard(None)

_PLAIN = (bool, int, float, complex, str, bytes, type(None), tuple, list, dict, set, frozenset)

Bound = tuple[tuple[str, Any], ...]  # spec parameter name -> value, in call order ("_0", "_1": positional)
Step = tuple[str, Bound]


@dataclass(frozen=True)
class OneShot:
    """A one-shot iterator argument, recorded as its values (E8): passed on as ``iter(values)``."""

    values: tuple[Any, ...]

    def __repr__(self) -> str:
        return f"iter({list(self.values)!r})"


@dataclass(frozen=True)
class Call:
    """One spec-level call: ``receiver`` is the chain of calls from the root object (e.g. ``pool('p')``)."""

    receiver: tuple[Step, ...]
    method: str
    bound: Bound
    now: float | None


# ("value", projected answer) | ("raised", exception type name) | ("raised", type name, the names its
# message must name one of: a B1 refusal)
Outcome = tuple[Any, ...]


@dataclass
class Recording:
    """What the oracle saw of one example: the constructor arguments and the calls."""

    init: dict[str, Any]
    start: float | None
    calls: list[Call] = field(default_factory=list)


def _repr(value: Any) -> str:
    """``repr``, with a frozenset's members in a stable order."""
    if isinstance(value, frozenset) and value:
        return f"frozenset({sorted(value, key=repr)!r})"
    return repr(value)


def live(value: Any) -> Any:
    """The value to pass on: a fresh iterator for a recorded one-shot argument."""
    return iter(value.values) if isinstance(value, OneShot) else value


def _spec_call(method: Callable[..., Any], bound: Bound) -> Any:
    args = [live(v) for k, v in bound if k.startswith("_")]
    return method(*args, **{k: live(v) for k, v in bound if not k.startswith("_")})


class PerPoolRegistry:
    """The registry the oracle keeps around a per-pool class: ``pool(name)`` creates on first use (P1)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._pools: dict[Any, Any] = {}

    def pool(self, name: Any) -> Any:
        try:
            hash(name)
        except TypeError:  # P1, B1: as a registry refuses it, naming the parameter
            what = f"{type(name).__name__} {name!r}"
            raise TypeError(f"name must be hashable (a pool's name), got {what}") from None
        if name not in self._pools:
            self._pools[name] = self._make()
        return self._pools[name]

    def clear(self) -> None:
        for beliefs in self._pools.values():
            beliefs.clear()

    def clear_inflight(self) -> None:
        for beliefs in self._pools.values():
            beliefs.clear_inflight()


class Searching(Protocol):
    """What a search owns and a session's factory reads and writes (``_sequential.SearchState``): the
    groups it set aside after their failure (O2: their examples and rules are skipped), and the recording
    of the example being run."""

    set_aside: dict[str, str]
    recording: Recording | None


class Session:
    """One target under one adapter, fixed once built: what the probe found (O10), the run's configuration
    (declared choices, groups left out on request, pinned settings) and the means to build and call the
    target for the machines and for replays.  What a search learns as it runs is its own (``Searching``)."""

    def __init__(
        self,
        component: Component,
        target: Callable[..., Any],
        adapter: Adapter,
        call_timeout: float | None = CALL_TIMEOUT,
        *,
        declare: Mapping[str, str] | None = None,
        leave_out: Sequence[str] = (),
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        self.component = component
        # O8: every call to the target, its constructor included, returns within the call timeout or ends
        # the run as a FAIL (spec/oracle/_timeout.py)
        self.guard = CallGuard(call_timeout)
        self.target = target
        self.adapter = adapter
        self.holder = ClockHolder()
        # optional group -> why it is left out: what the target lacks (the probe), then what was asked for;
        # read-only once built (a search's set-aside groups are its own)
        self.left_out: Mapping[str, str] = {}
        # O3: the declared design choices, each at its default until declared otherwise
        self.declared: Mapping[str, str] = {name: values[0] for name, values in component.choices.items()}
        # --settings: the file store's configuration pinned for every example and history (None: drawn)
        self.settings: dict[str, Any] | None = None if settings is None else dict(settings)
        self.per_pool_class = False  # found by the probe's build
        self._accepts = self._accepted_parameters()
        self.time_control = "none"  # or "injected" (passed to the constructor), or "patched" into modules
        if "clock" in component.constructor:
            self.time_control = "injected" if self.accepts("clock") else "patched"
        # Patched: the modules of the factory or class; _probe adds those of the instance's classes (a
        # factory's product, a subclass defined elsewhere than the class that reads the clock).
        patched = self.time_control == "patched"
        self.time = Interposition(patched, time_modules(target), partial(control_time, read=self.holder))
        self.fs_control = FsControl(self)  # O4, the filesystem half: spec/oracle/_fs.py
        self.counters_on = False  # M8: the target is built with its counters' constructor parameter True
        self.missing: set[str] = set()  # O3: methods that a declared value needs and the target lacks
        self.probe: Probe  # O10: what the target is, made once by _probe()
        self._probe()
        counters = component.counters
        if counters is not None and counters[1] not in self.left_out and counters[2] not in adapter.omit:
            # Taken by name, or by a **kwargs (as every other constructor argument is); never passed to a
            # constructor without a signature (a C type), nor when the adapter omits it.
            signature = _signature_of(target)
            keyword = adapter.keyword_of("__init__", counters[2])
            self.counters_on = signature is not None and any(
                p.name == keyword or p.kind is p.VAR_KEYWORD for p in signature.parameters.values()
            )
        self.declared = MappingProxyType({**self.declared, **self._declared(declare or {})})
        lacks = dict(self.left_out)
        for group in leave_out:
            if group not in component.groups:
                known = ", ".join(sorted(component.groups)) or "none"
                raise OracleUsageError(
                    f"--leave-out {group}: not a group of {component.name} (groups: {known})"
                )
            lacks[group] = f"{group}: left out on request (--leave-out)"
        self.left_out = MappingProxyType(lacks)

    def counting(self, set_aside: Collection[str] = ()) -> bool:
        """M8: the target has the counters' method and its group is neither left out nor ``set_aside``:
        they must count."""
        counters = self.component.counters
        return counters is not None and not {counters[0], counters[1]} & {*self.left_out, *set_aside}

    # -- set-up --------------------------------------------------------------

    def _accepted_parameters(self) -> set[str] | None:
        """The spec constructor parameters the target takes, or None when it takes anything."""
        signature = _signature_of(self.target)  # None for a C type without one: it takes everything
        if signature is None or any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values()):
            return None
        names = set(signature.parameters)
        return {p for p in self.component.constructor if self.adapter.keyword_of("__init__", p) in names}

    def accepts(self, parameter: str) -> bool:
        return parameter not in self.adapter.omit and (self._accepts is None or parameter in self._accepts)

    def _probe(self) -> None:
        """Build one instance to learn which optional groups the target has."""
        optional = self.component.optional_parameters.items()
        lacks = {parameter: why for parameter, why in optional if not self.accepts(parameter)}
        self.left_out = lacks
        undo = self.patch()
        try:
            probe = {k: v for k, v in self.component.probe_arguments().items() if k not in self.left_out}
            obj = self.build(probe, CountingClock(0.0) if "clock" in self.component.constructor else None)
            child = obj
            if self.component.child is not None:
                child = getattr(obj, self.component.child)("probe")
        except (Exception, CallTimedOut) as error:  # whatever the target raises here is a usage problem
            name = f"{getattr(self.target, '__module__', '?')}:{getattr(self.target, '__qualname__', '?')}"
            raise OracleUsageError(
                f"cannot build the target {name} as {self.component.name} needs "
                f"({self.component.probe_text}): {one_line(error)}"
            ) from None
        finally:
            undo()
        pooled = None
        if self.adapter.form == "per-pool" and self.component.pooled:
            pooled = getattr(obj, self.adapter.name_of("pool"), None)
            if pooled is None:
                raise OracleUsageError("the per-pool form needs a pool(name) method on the target")
            pooled = pooled("probe")
        self._add_time_modules(obj, child, pooled)
        self.fs_control.add_modules(obj)

        def holder(method: str) -> Any:
            """The probe object that answers ``method``: a pool of the per-pool form, or a child, or obj."""
            if pooled is not None and method in self.component.pooled:
                return pooled
            return child if method in self.component.child_methods else obj

        for method, why in self.component.optional_methods.items():
            if method in self.adapter.omit or not _has(holder(method), self.adapter.name_of(method)):
                lacks[method] = why
        if child is not obj and pooled is None:  # a registry handing out pools: its own methods too
            for method, why in self.component.registry_methods.items():
                if method not in lacks and not _has(obj, self.adapter.name_of(method)):
                    lacks[f"registry {method}"] = why
        declared = {m for methods in self.component.declared_methods.values() for m in methods}
        self.missing = {
            m for m in declared if m in self.adapter.omit or not _has(holder(m), self.adapter.name_of(m))
        }
        if self.adapter.form == "engine":  # O12: what the engine's interface lacks is left out and listed
            from ._engine import LACKS

            lacks.update(LACKS)
        for method in self.component.required:
            if method in lacks:
                continue
            if not _has(holder(method), self.adapter.name_of(method)):
                raise OracleUsageError(
                    f"the target has no method {self.adapter.name_of(method)!r} (spec: {method}); map it "
                    f'with an adapter, e.g. --adapter \'{{"methods": {{"{method}": "its_name"}}}}\''
                )
        offers = frozenset(
            m
            for m in self.component.methods
            if m not in self.adapter.omit and _has(holder(m), self.adapter.name_of(m))
        )
        self.probe = Probe(
            accepts=None if self._accepts is None else frozenset(self._accepts),
            offers=offers,
            lacks=MappingProxyType(dict(lacks)),
            missing=frozenset(self.missing),
            time_control=self.time_control,
            form=self.adapter.form,
        )

    def offers(self, method: str) -> bool:
        """O10: ``method`` may be called in this run (the probe found it, and it is not left out)."""
        return offered(self.component, self.probe, self.left_out, method)

    def _add_time_modules(self, *instances: Any) -> None:
        """Patched time: also patch the modules of the probe instances' classes; a usage error when no
        module that may read the clock for the target refers to the time at all (it would run on the
        real clock, and the verdict of a TTL would depend on the machine's speed)."""
        bound = bound_clocks(self.target) if self.time.active else {}
        if bound:
            parameter = next(iter(bound))
            mapping = f'{{"arguments": {{"__init__": {{"clock": "{parameter}"}}}}}}'
            raise OracleUsageError(
                f"cannot control the time of the target: {', '.join(bound.values())} binds the real clock "
                "at import, where patching the module cannot reach it. Let the oracle pass its clock "
                f"there: --adapter '{mapping}'"
            )
        self.time.reach(
            [obj for obj in instances if not isinstance(obj, PerPoolRegistry)],  # the oracle's wrapper
            "cannot control the time of the target: it takes no clock parameter, and no module of it "
            "or of its classes (%s) refers to time.monotonic, time.time or time.perf_counter. "
            "Give its constructor a clock parameter (e.g. clock: Callable[[], float] = time.monotonic) "
            "or map the one it has with an adapter, e.g. "
            '--adapter \'{"arguments": {"__init__": {"clock": "its_name"}}}\'',
        )

    def describe_time(self) -> str:
        if self.time_control == "injected":
            return f"injected: the fake clock is passed as {self.adapter.keyword_of('__init__', 'clock')}="
        if self.time_control == "patched":
            return f"patched: the names {self.time.where()} read the fake clock"
        return "not applicable (the component has no time)"

    def patch(self) -> Callable[[], None]:
        """Patch the time and interpose the filesystem in the target's modules, as controlled; the undo."""
        undo = ExitStack()  # undone last in, first out: the filesystem, then the time
        undo.callback(self.time.patch())
        undo.callback(self.fs_control.patch())
        return undo.close

    # -- building ------------------------------------------------------------

    def factory_for(self, search: Searching) -> Callable[..., TargetProxy]:
        """The factory handed to ``search``'s machine: binds spec arguments, builds the target and records
        the example in ``search.recording``; what is left out or ``search`` set aside is skipped."""
        skipped = ChainMap(search.set_aside, dict(self.left_out))  # the search's groups as they stand
        groups = {p: p for p in self.component.optional_parameters} | dict(self.component.group_parameters)

        def factory(*args: Any, **kwargs: Any) -> TargetProxy:
            bound = dict(zip(self.component.constructor, args, strict=False))
            bound.update(kwargs)
            # A group the target lacks (a parameter) or that is set aside: only examples without its
            # parameter.
            if any(group in skipped and bound.get(p) is not None for group, p in groups.items()):
                reject()
            clock = bound.pop("clock", None)
            init = {k: v for k, v in bound.items() if not (k in skipped and v is None)}
            recording = search.recording = Recording(init, clock() if clock is not None else None)
            try:
                obj = self.build(init, clock)
            except Exception as error:  # a refused argument the spec allows: the report's FAIL, not a crash
                raise ConstructorRefused(self, init, error) from None
            return TargetProxy(self, obj, (), recording, skipped=skipped)

        return factory

    def constructor_call(self, init: Mapping[str, Any], clock: Any) -> Any:
        bound = dict(init)
        if clock is not None and self.time_control == "injected":
            bound["clock"] = clock
        if self.counters_on and self.component.counters is not None:
            bound[self.component.counters[2]] = True  # M8: counters on
        return self.adapter.translate("__init__", bound, self.component.constructor[:1])

    def build(
        self, init: Mapping[str, Any], clock: Callable[[], float] | None, guard: CallGuard | None = None
    ) -> Any:
        """A fresh target for the spec constructor arguments ``init``, built under ``guard`` (the session's
        call guard when None; the threads mode passes :data:`UNGUARDED`)."""
        if clock is not None:
            self.holder.clock = clock
        # O10: a parameter the constructor does not take is not passed at its spec default (None: a
        # constructor without max_entries runs unbounded), in every mode.
        init = {k: v for k, v in init.items() if v is not None or self.accepts(k)}
        init = self.fs_control.take(init)
        call = self.constructor_call(init, self.holder if clock is not None else None)
        text = self.constructor_text(init, clock is not None)
        obj = (guard or self.guard).run(lambda: self.target(*call.args, **call.kwargs), text)
        child = self.component.child
        if child is not None and not hasattr(obj, self.adapter.name_of(child)):
            # A per-pool class: the oracle keeps one instance per pool name (P1).
            self.per_pool_class = True
            return PerPoolRegistry(lambda: self.target(*call.args, **call.kwargs))
        return obj

    def _declared(self, choices: Mapping[str, str]) -> dict[str, str]:
        """O3: the target's declared design choices, checked (OracleUsageError for an unknown one)."""
        for name, value in choices.items():
            allowed = self.component.choices.get(name)
            if allowed is None:
                known = ", ".join(self.component.choices) or "none"
                raise OracleUsageError(
                    f"--declare {name}={value}: {self.component.name} has no such choice (choices: {known})"
                )
            if value not in allowed:
                raise OracleUsageError(f"--declare {name}={value}: {name} is one of {', '.join(allowed)}")
            needs = [m for m in self.component.declared_methods.get((name, value), ()) if m in self.missing]
            if needs:
                method = needs[0]
                raise OracleUsageError(
                    f"--declare {name}={value}: the target has no method {self.adapter.name_of(method)!r} "
                    f"(spec: {method}), which the machine calls as a step; map it with an adapter, e.g. "
                    f'--adapter \'{{"methods": {{"{method}": "its_name"}}}}\''
                )
        return dict(choices)

    def projection(self, method: str) -> Any:
        """How ``method``'s answer is compared under the declared choices (a Projection, or None)."""
        for (name, value), projections in self.component.declared_projections.items():
            if self.declared.get(name) == value and method in projections:
                return projections[method]
        return self.component.projections.get(method)

    def now(self) -> float | None:
        if "clock" not in self.component.constructor:
            return None
        # The oracle's own reading, not one of the target's: a machine's FakeClock is read without a
        # call, so a machine counting the target's readings (M9: one per batch) does not count it.
        clock = self.holder.clock
        now = getattr(clock, "now", None)
        return now if isinstance(now, float) else clock()

    def bind(self, method: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Bound:
        names = self.component.methods.get(method) or tuple(f"_{i}" for i in range(len(args)))
        pairs = [*zip(names, args, strict=False), *kwargs.items()]
        return tuple((k, OneShot(tuple(v)) if isinstance(v, Iterator) else v) for k, v in pairs)

    def target_call(self, method: str, bound: Bound) -> tuple[tuple[Any, ...], TargetCall]:
        """The TargetCall for a spec-level call, after the pool to ask the receiver for: ``(pool,)`` in the
        per-pool form (``receiver.pool(pool).method(...)``), else ``()``."""
        values = dict(bound)
        names = self.component.methods.get(method) or tuple(values)
        if self.adapter.form == "per-pool" and method in self.component.pooled and "pool" in values:
            names = tuple(n for n in names if n != "pool")
            return (values.pop("pool"),), self.adapter.translate(method, values, names)
        return (), self.adapter.translate(method, values, names)

    def constructor_text(self, init: Mapping[str, Any], clock: bool) -> str:
        """The constructor call as code, e.g. ``target(1.0, clock=clock)``."""
        call = self.constructor_call(init, "__CLOCK__" if clock else None)
        parts = [_repr(a) for a in call.args] + [f"{k}={_repr(v)}" for k, v in call.kwargs.items()]
        return f"target({', '.join(parts)})".replace("'__CLOCK__'", "clock")


class ConstructorRefused(AssertionError):
    """The target's constructor raised for arguments the spec allows: a FAIL of the component's
    constructor clause (M1, E1, ...), reported with the constructor call (O5)."""

    def __init__(self, session: Session, init: Mapping[str, Any], error: BaseException) -> None:
        self.clause = session.component.constructor_clause
        self.call = session.constructor_text(init, "clock" in session.component.constructor)
        self.error = one_line(error)
        super().__init__(f"{self.clause}: {self.call} raised {self.error}")


_SIGNATURES: dict[Any, inspect.Signature | None] = {}


def _signature_of(function: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(function)
    except (TypeError, ValueError):  # no signature to bind to (a C method): its TypeError is an answer
        return None


def _check_signature(session: Session, method: str, function: Any, call: Any) -> None:
    """A usage error (exit 2, not a FAIL) when ``function`` cannot take ``call``'s arguments, checked by
    binding them to its signature, once per method of a class: a TypeError raised inside it is an answer."""
    underlying = getattr(function, "__func__", None)  # a bound method: its signature is its function's
    if underlying is not None and underlying not in _SIGNATURES:
        _SIGNATURES[underlying] = _signature_of(function)
    signature = _signature_of(function) if underlying is None else _SIGNATURES[underlying]
    if signature is None:
        return
    try:
        signature.bind(*call.args, **call.kwargs)
    except TypeError as error:
        names = session.component.methods.get(method, ())
        expected = session.adapter.translate(method, {n: n for n in names}, names)
        shape = ", ".join([*expected.args, *(f"{k}=..." for k in expected.kwargs)])
        plain = signature.replace(
            parameters=[p.replace(annotation=p.empty) for p in signature.parameters.values()],
            return_annotation=signature.empty,
        )
        raise OracleUsageError(
            f"the target's {call.method}{plain} cannot be called as the component calls it, "
            f"{call.method}({shape}): {error}. Map the names with an adapter "
            '(--adapter \'{"methods": {...}, "arguments": {...}, "positional": {...}}\')'
        ) from None


def _has(obj: Any, name: str) -> bool:
    return hasattr(type(obj) if name == "__len__" else obj, name)


class TargetProxy:
    """What the machine sees: the target behind the adapter, every call recorded."""

    def __init__(
        self,
        session: Session,
        obj: Any,
        receiver: tuple[Step, ...],
        recording: Recording | None,
        *,
        skipped: Mapping[str, str] | None = None,
        guard: CallGuard | None = None,
    ) -> None:
        """``skipped``: the names the machine must not call (the session's ``left_out`` when None; a
        search's view adds what it set aside); ``guard``: the calls' (the session's when None)."""
        self._session = session
        self._obj = obj
        self._receiver = receiver
        self._recording = recording
        self._skipped = session.left_out if skipped is None else skipped
        self._guard = session.guard if guard is None else guard
        self._children: dict[str, TargetProxy] = {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        session = self._session
        counters = session.component.counters
        hidden = counters is not None and name == counters[1] and counters[0] in self._skipped
        if name in self._skipped or hidden:  # not checked: the machine skips what the target lacks
            raise AttributeError(f"{name} is left out for this target")
        if not (session.adapter.form == "per-pool" and name in session.component.pooled):
            value = getattr(self._obj, session.adapter.name_of(name))
            if not callable(value):
                return value
        return lambda *args, **kwargs: self._call(name, args, kwargs)

    def __len__(self) -> int:
        return int(self._call("__len__", (), {}))

    def _in_one_call(self, calls: Callable[[], object], text: str) -> object:
        """Run ``calls`` (several calls of the target, B1's bad inputs) as one call of the guard: the calls
        inside run on its worker directly, under one timeout (O8), each still recorded."""
        return self._guard.run(calls, text)

    def _parameter_names(self, method: str, position: int) -> tuple[str, ...]:
        """B1: the target's own name for the spec parameter at ``position`` of ``method`` (the one a message
        about a bad argument there may name): the adapter's keyword for it, or the parameter of the
        target's method that takes it positionally.  Nothing is called (a pool is not asked for)."""
        session = self._session
        names = session.component.methods.get(method, ())
        if position >= len(names):
            return ()
        spec_name = names[position]
        pool, call = session.target_call(method, tuple((n, n) for n in names))
        keyword = [k for k, v in call.kwargs.items() if v == spec_name]
        if keyword or pool or spec_name not in call.args:
            return tuple(keyword)
        signature = _signature_of(getattr(self._obj, call.method, None))
        parameters = list(signature.parameters) if signature is not None else []
        index = call.args.index(spec_name)
        return (parameters[index],) if index < len(parameters) else ()

    def _call(self, method: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        session = self._session
        bound = session.bind(method, args, kwargs)
        if self._recording is not None:
            self._recording.calls.append(Call(self._receiver, method, bound, session.now()))
        pool, target = session.target_call(method, bound)

        def call() -> Any:  # in the guard's worker thread (O8: under the call timeout)
            receiver = getattr(self._obj, session.adapter.name_of("pool"))(*pool) if pool else self._obj
            if target.method == "__len__":
                return len(receiver)
            function = getattr(receiver, target.method)
            _check_signature(session, method, function, target)
            return function(*map(live, target.args), **{k: live(v) for k, v in target.kwargs.items()})

        result: Any = self._guard.run(call, _call_text(target))
        if isinstance(result, _PLAIN):
            return result
        key = f"{method}{bound!r}"
        child = self._children.get(key)
        if child is None or child._obj is not result:  # the same object answers with the same proxy (P1)
            receiver = (*self._receiver, (method, bound))
            child = TargetProxy(
                session, result, receiver, self._recording, skipped=self._skipped, guard=self._guard
            )
            self._children[key] = child
        return child


def _call_text(call: TargetCall) -> str:
    """A call in the target's API, for the report of a call that did not return (``add('a')``)."""
    if call.method == "__len__":
        return "len(target)"
    arguments = [*map(_repr, call.args), *(f"{k}={_repr(v)}" for k, v in call.kwargs.items())]
    return f"{call.method}({', '.join(arguments)})"


def _resolve(root: Any, receiver: tuple[Step, ...]) -> Any:
    obj = root
    for method, bound in receiver:
        obj = (
            obj._call(method, [], dict(bound))
            if isinstance(obj, TargetProxy)
            else _spec_call(getattr(obj, method), bound)
        )
    return obj


# -- replay ------------------------------------------------------------------


@dataclass
class Replay:
    """The calls replayed on a fresh target and a fresh spec, with both answers."""

    calls: list[Call]
    got: list[Outcome]
    want: list[Outcome | None]  # None: not compared (no answer in the spec, or the spec answers None)
    divergence: int | None
    errors: list[str] = field(default_factory=list)  # per call, the target's exception in one line, or ""


def _outcome(
    run: Callable[[], Any],
    project: Callable[[Any], Any] = lambda value: value,
    errors: list[str] | None = None,
) -> Outcome:
    """The answer of ``run`` (an exception is compared by its type; its message goes to ``errors``)."""
    try:
        return ("value", project(run()))
    except Exception as error:  # any exception is an answer to compare, the divergence itself
        if errors is not None:
            errors.append(one_line(error))
        return ("raised", type(error).__name__)


def _named(
    receiver: TargetProxy, method: str, spec_error: str, error: str, actual: Outcome
) -> tuple[Outcome, Outcome]:
    """B1: the outcomes of a call the spec and the target both refused with the same exception type: the
    spec's names the parameter its message begins with (with the target's own name for it); the target's
    matches only when its message names one of them."""
    spec_message, message = spec_error.partition(": ")[2], error.partition(": ")[2]
    named = parameter_named(Exception(spec_message))
    parameters = receiver._session.component.methods.get(method, ())
    own = receiver._parameter_names(method, parameters.index(named)) if named in parameters else ()
    names = tuple(sorted({named, *own} - {""}))
    expected: Outcome = ("raised", actual[1], names)
    return expected, (expected if names_any(message, names) else actual)


def _diverges(got: Outcome, want: Outcome | None) -> bool:
    raised_alone = got[0] == "raised" and (want is None or want[0] != "raised")
    return raised_alone or (want is not None and got != want)


def replay(session: Session, recording: Recording, calls: Sequence[Call]) -> Replay:
    """Run ``calls`` on a fresh target and a fresh spec.  The divergence is the last call's (the machine
    fails at the call whose answer is wrong); an earlier call that diverges is one of a clause the run
    set aside (O2), which the machine let pass: it is not compared in the reproduction."""
    component = session.component
    timed = recording.start is not None
    clock = CountingClock(recording.start if recording.start is not None else 0.0)
    undo = session.patch()
    try:
        target = TargetProxy(session, session.build(recording.init, clock if timed else None), (), None)
        model = component.spec_factory()(
            **recording.init, **session.declared, **({"clock": clock} if timed else {})
        )
        got: list[Outcome] = []
        want: list[Outcome | None] = []
        errors: list[str] = []
        for call in calls:
            if call.now is not None:
                clock.now = call.now
            projection = session.projection(call.method)
            refused: list[str] = []  # the spec's B1 refusal, with its message
            spec_receiver = _resolve(model, call.receiver)
            expected: Outcome | None = None
            if projection is not None:
                expected = ("value", projection.spec(spec_receiver))
            elif hasattr(spec_receiver, call.method):
                method = getattr(spec_receiver, call.method)
                expected = _outcome(partial(_spec_call, method, call.bound), errors=refused)
                if expected[0] == "value" and (expected[1] is None or not isinstance(expected[1], _PLAIN)):
                    expected = None
            impl_receiver = _resolve(target, call.receiver)
            reads = clock.reads
            run = partial(TargetProxy._call, impl_receiver, call.method, [], dict(call.bound))
            raised: list[str] = []
            actual = _outcome(run, projection.impl if projection else lambda value: value, raised)
            errors.append(raised[0] if raised else "")
            if refused and raised and expected == actual:  # B1: the message names the parameter too
                expected, actual = _named(impl_receiver, call.method, refused[0], raised[0], actual)
            if timed and call.method in component.one_instant and clock.reads - reads > 1:
                actual, expected = ("clock readings", clock.reads - reads), ("clock readings", 1)
            got.append(actual)
            want.append(expected)
        diverging = [i for i in range(len(calls)) if _diverges(got[i], want[i])]
        if not diverging:
            return Replay(list(calls), got, want, None, errors)
        # The last call, when it diverges; else the first that does (the machine failed later, on
        # something it compares its own way): the calls end there.
        end = diverging[-1] if diverging[-1] == len(calls) - 1 else diverging[0]
        for index in diverging:
            if index < end:
                want[index] = None
        return Replay(list(calls[: end + 1]), got[: end + 1], want[: end + 1], end, errors[: end + 1])
    finally:
        undo()


def minimize(session: Session, recording: Recording) -> Replay | None:
    """The fewest calls of ``recording`` whose last still diverges (greedy one-call deletion), or None."""
    best = replay(session, recording, recording.calls)
    if best.divergence is None:
        return None
    # B1's bad inputs the spec refused (a machine tries a dozen or more an example): all dropped at once
    # first, when the divergence does not need them, so the one-call pass has that many fewer replays.
    kept = [c for c, w in zip(best.calls[:-1], best.want, strict=False) if not (w and w[0] == "raised")]
    if len(kept) < len(best.calls) - 1:
        candidate = replay(session, recording, [*kept, best.calls[-1]])
        if candidate.divergence is not None:
            best = candidate
    changed = True
    while changed:
        changed = False
        for index in range(len(best.calls) - 2, -1, -1):
            if index < len(best.calls) - 1:  # a replay ends at its divergence: it may have cut more
                candidate = replay(session, recording, best.calls[:index] + best.calls[index + 1 :])
                if candidate.divergence is not None:
                    best = candidate
                    changed = True
    return best
