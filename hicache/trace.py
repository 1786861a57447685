"""Record a cache's real traffic as hicache-trace/1, for ``hicache-oracle COMPONENT --trace FILE`` (O9).

Wrap any object; the wrapper serves every call as the object does and records each one (thread, method,
arguments, the clock just before and after, the answer or the exception's type name), for the spec to
judge later (docs/SEMANTICS.md O7)::

    import time
    from hicache import MetadataCache
    from hicache.trace import TraceRecorder

    with TraceRecorder("cache.trace.jsonl", "metadata-cache",
                       {"ttl_seconds": 5.0, "max_entries": None}, clock=time.monotonic) as recorder:
        cache = recorder.wrap(MetadataCache(5.0, clock=time.monotonic))
        ...  # serve traffic from any number of threads

    # later, anywhere:  hicache-oracle metadata-cache --trace cache.trace.jsonl

``clock`` must be the clock the object reads for its TTL; one-shot iterators (E8) are recorded as lists.
Thread-safe and cheap (two clock readings and one deque append per call); what is recorded and how:
docs/ARCHITECTURE.md, "Design notes".  Standard library only: vendor it by copying this file.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, Any

__all__ = ["FORMAT", "TraceRecorder"]

FORMAT = "hicache-trace/1"
_PLAIN = frozenset({str, int, float, bool, type(None), bytes, tuple, list, frozenset})


def _jsonable(value: Any) -> Any:
    """Convert what ``json`` cannot write as is: sets to sorted lists, bytes to text, the rest by ``repr``."""
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, Iterator):
        return repr(value)
    if isinstance(value, Sequence) or hasattr(value, "__iter__"):
        return list(value)
    return repr(value)


# One encoder for every line (json.dumps with default= builds a new one at each call).
_encode = json.JSONEncoder(default=_jsonable).encode
_SIMPLE = frozenset({bool, type(None)})
_RESULTS = {None: '"result": null', True: '"result": true', False: '"result": false'}
_MEMO = 65536  # argument tuples whose JSON text is kept (keys repeat: each is encoded once)


class TraceRecorder:
    """Writes hicache-trace/1 to ``out`` (a path, or a text file it does not close) for the objects it wraps.

    ``component and ``config`` (the constructor's keyword arguments) make the header, with
    ``declare`` and ``leave_out`` when given.
    """

    def __init__(
        self,
        out: str | IO[str],
        component: str,
        config: Mapping[str, Any],
        *,
        clock: Callable[[], float] = time.monotonic,
        declare: Mapping[str, str] | None = None,
        leave_out: Sequence[str] | None = None,
        flush_every: int = 4096,
    ) -> None:
        if not isinstance(component, str) or not component:
            raise TypeError(f"component must be a component name such as 'metadata-cache', got {component!r}")
        if not callable(clock):
            raise TypeError(f"clock must be callable, got {type(clock).__name__} {clock!r}")
        if isinstance(flush_every, bool) or not isinstance(flush_every, int) or flush_every < 1:
            raise ValueError(f"flush_every must be an int >= 1, got {flush_every!r}")
        self.component, self.clock, self.flush_every = component, clock, flush_every
        self._owned = isinstance(out, str)
        self._out: IO[str] = open(out, "w", encoding="utf-8") if isinstance(out, str) else out  # noqa: SIM115
        self._pending: deque[tuple[Any, ...]] = deque()
        self._lock = threading.Lock()  # the writer's, never held during a call of the object
        self._numbers: dict[int, int] = {}  # thread identity -> its number, in the order of the lines
        self._encoded: dict[tuple[Any, ...], str] = {}  # arguments -> their JSON text
        self._encoded_ops: dict[str, str] = {}
        header: dict[str, Any] = {"format": FORMAT, "component": component, "config": dict(config)}
        if declare:
            header["declare"] = dict(declare)
        if leave_out:
            header["leave_out"] = list(leave_out)
        self._out.write(_encode(header) + "\n")
        self.closed = False

    # -- wrapping ---------------------------------------------------------------------------------------

    def wrap(self, target: Any) -> Any:
        """Return a stand-in for ``target`` that records every public call made through it."""
        children = {"pool": "pool."} if self.component == "pool-beliefs" else {}
        return _Traced(target, self, "", (), children)

    def _recorded(self, method: Callable[..., Any], op: str, lead: tuple[Any, ...]) -> Callable[..., Any]:
        clock, append, flush_every, pending = (
            self.clock,
            self._pending.append,
            self.flush_every,
            self._pending,
        )
        ident, plain = threading.get_ident, _PLAIN
        signature: list[inspect.Signature | None] = []

        def call(*args: Any, **kwargs: Any) -> Any:
            if kwargs:  # the format has positional arguments only: bind them by the method's signature
                if not signature:
                    signature.append(_signature(method))
                if signature[0] is not None:
                    bound = signature[0].bind(*args, **kwargs)
                    args, kwargs = bound.args, bound.kwargs
            for value in args:
                if type(value) not in plain:
                    args = tuple(list(a) if isinstance(a, Iterator) else a for a in args)
                    break
            shown = args
            if kwargs:  # left after binding (no signature, or **kwargs): written after the positions
                kwargs = {k: list(v) if isinstance(v, Iterator) else v for k, v in kwargs.items()}
                shown = (*args, *kwargs.values())
            invoke = clock()
            try:
                result = method(*args, **kwargs)
            except BaseException as error:
                append((ident(), op, lead, shown, invoke, clock(), None, type(error).__name__))
                if len(pending) >= flush_every:
                    self.flush()
                raise
            append((ident(), op, lead, shown, invoke, clock(), result, None))
            if len(pending) >= flush_every:
                self.flush()
            return result

        return call

    # -- writing ----------------------------------------------------------------------------------------

    def flush(self) -> None:
        """Write the calls recorded so far (the file's own buffer is flushed too)."""
        with self._lock:
            if self.closed:
                return
            pending, numbers, lines = self._pending, self._numbers, []
            encoded, encoded_ops = self._encoded, self._encoded_ops
            for _ in range(len(pending)):
                ident, op, lead, args, invoke, ret, result, error = pending.popleft()
                thread = numbers.get(ident)
                if thread is None:
                    thread = numbers[ident] = len(numbers)
                if lead:
                    args = lead + args
                try:
                    text = encoded[args]
                except (KeyError, TypeError):  # new, or unhashable arguments
                    text = _encode(args)
                    if len(encoded) < _MEMO:
                        with contextlib.suppress(TypeError):
                            encoded[args] = text
                if error is not None:
                    outcome = f'"error": {_encode(error)}'
                else:
                    outcome = _RESULTS.get(result, "") if type(result) in _SIMPLE else ""
                    outcome = outcome or f'"result": {_encode(result)}'
                name = encoded_ops.get(op)
                if name is None:
                    name = encoded_ops[op] = _encode(op)
                lines.append(
                    f'{{"thread": {thread}, "op": {name}, "args": {text}, "invoke": {invoke!r},'
                    f' "return": {ret!r}, {outcome}}}'
                )
            if lines:
                self._out.write("\n".join(lines) + "\n")
            self._out.flush()

    def close(self) -> None:
        """Flush, then close the file if the recorder opened it (calls after this are not recorded)."""
        self.flush()
        with self._lock:
            if not self.closed and self._owned:
                self._out.close()
            self.closed = True

    def __enter__(self) -> TraceRecorder:
        """Return the recorder itself, for ``with``."""
        return self

    def __exit__(self, *_exc: object) -> None:
        """Flush and close, as :meth:`close`."""
        self.close()


def _signature(method: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(method)
    except (TypeError, ValueError):
        return None


class _Traced:
    """The stand-in :meth:`TraceRecorder.wrap` returns (each public method is wrapped once, then cached)."""

    def __init__(
        self,
        target: Any,
        recorder: TraceRecorder,
        prefix: str,
        lead: tuple[Any, ...],
        children: dict[str, str],
    ) -> None:
        object.__setattr__(self, "_hicache_trace", (target, recorder, prefix, lead, children))

    def __getattr__(self, name: str) -> Any:
        target, recorder, prefix, lead, children = object.__getattribute__(self, "_hicache_trace")
        attribute = getattr(target, name)
        if name.startswith("_") or not callable(attribute):
            return attribute
        if name in children:
            child_prefix = children[name]

            def child(key: Any, *args: Any, **kwargs: Any) -> Any:
                return _Traced(attribute(key, *args, **kwargs), recorder, child_prefix, (key,), {})

            wrapped: Callable[..., Any] = child
        else:
            wrapped = recorder._recorded(attribute, prefix + name, lead)
        self.__dict__[name] = wrapped  # later lookups find it without __getattr__
        return wrapped

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(object.__getattribute__(self, "_hicache_trace")[0], name, value)

    def __len__(self) -> int:
        return self._op("len", "__len__")()  # type: ignore[no-any-return]

    def __contains__(self, key: Any) -> bool:
        return bool(self._op("contains", "__contains__")(key))

    def _op(self, op: str, dunder: str) -> Callable[..., Any]:
        cache = self.__dict__
        if dunder not in cache:
            target, recorder, prefix, lead, _children = object.__getattribute__(self, "_hicache_trace")
            cache[dunder] = recorder._recorded(getattr(target, dunder), prefix + op, lead)
        return cache[dunder]  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"<recorded {object.__getattribute__(self, '_hicache_trace')[0]!r}>"
