"""Declarative adapters: how a target's interface maps onto the spec's.

An adapter is data, not code: method renames, argument renames, the order of
positional arguments, the form of an existence cache, and the operations to
leave out on purpose.  The oracle translates every spec-level call through it,
so the machines, the replay and the reproduction file all speak the target's
own API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import takewhile
from typing import Any

__all__ = ["FORMS", "KEYS", "Adapter", "TargetCall"]

FORMS = ("global", "per-pool", "engine")  # engine: O12, the engine's HiCacheStorage (file stores)

# The adapter's keys and what each does (``--describe`` prints them, with an example per component).
KEYS: dict[str, str] = {
    "methods": "spec method -> your method's name (__len__ may map to a method, e.g. size)",
    "arguments": "per method (__init__: the constructor), spec parameter -> your keyword; passed by keyword",
    "positional": "per method, the spec parameters taken positionally, in your order (the rest by keyword)",
    "form": "existence caches: global or per-pool (pool(name) objects, or a per-pool class); file stores: "
    "engine (the engine's HiCacheStorage: (storage_config, file_path), uint8 tensors; O12)",
    "omit": "spec operations or constructor parameters to leave out even if your class seems to have them",
}


@dataclass(frozen=True)
class TargetCall:
    """One call in the target's terms: ``receiver.method(*args, **kwargs)``."""

    method: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


@dataclass(frozen=True)
class Adapter:
    """How a target's API differs from the spec's.

    * ``methods``: spec method name -> the target's name (``"__len__"`` may map to
      a method such as ``"size"``; ``"__init__"`` is the constructor and is not renamed).
    * ``arguments``: spec method (or ``"__init__"``) -> {spec parameter: target
      keyword}; a renamed argument is passed by keyword.
    * ``positional``: spec method (or ``"__init__"``) -> the spec parameter names
      the target takes positionally, in the target's order (the rest go by keyword).
    * ``form``: ``"global"`` (one object, ``(pool, hash)`` calls) or ``"per-pool"``
      (``target.pool(name)`` objects, or a per-pool class the oracle keeps one of
      per pool name): existence caches only.
    * ``omit``: spec operations or constructor parameters to leave out even if the
      target seems to have them (``"max_entries"``, ``"clock"``, ``"__len__"``, ...).

    >>> a = Adapter(methods={"contains": "has"}, arguments={"__init__": {"clock": "timer"}})
    >>> a.translate("contains", {"key": "k"}, ("key",))
    TargetCall(method='has', args=('k',), kwargs={})
    >>> a.translate("__init__", {"ttl_seconds": 1.0, "clock": None}, ("ttl_seconds",)).kwargs
    {'timer': None}
    """

    methods: Mapping[str, str] = field(default_factory=dict)
    arguments: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    positional: Mapping[str, Sequence[str]] = field(default_factory=dict)
    form: str = "global"
    omit: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.form not in FORMS:
            raise ValueError(f"form must be one of {FORMS}, got {self.form!r}")
        object.__setattr__(self, "omit", frozenset(self.omit))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Adapter:
        """Build an adapter from plain data (the CLI's ``--adapter`` JSON); unknown keys are a ValueError."""
        unknown = sorted(set(data) - set(KEYS))
        if unknown:
            raise ValueError(f"adapter: unknown keys {unknown}; known keys are {sorted(KEYS)}")
        return cls(
            methods=dict(data.get("methods", {})),
            arguments={k: dict(v) for k, v in data.get("arguments", {}).items()},
            positional={k: tuple(v) for k, v in data.get("positional", {}).items()},
            form=str(data.get("form", "global")),
            omit=frozenset(data.get("omit", ())),
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "methods": dict(self.methods),
            "arguments": {k: dict(v) for k, v in self.arguments.items()},
            "positional": {k: list(v) for k, v in self.positional.items()},
            "form": self.form,
            "omit": sorted(self.omit),
        }

    def name_of(self, method: str) -> str:
        """The target's name for the spec method ``method``."""
        return self.methods.get(method, method)

    def keyword_of(self, method: str, parameter: str) -> str:
        """The target's keyword for the spec parameter ``parameter`` of ``method``."""
        return self.arguments.get(method, {}).get(parameter, parameter)

    def translate(
        self, method: str, bound: Mapping[str, Any], default_positional: Sequence[str]
    ) -> TargetCall:
        """The target call for a spec call whose arguments are ``bound`` (spec name -> value)."""
        order = self.positional.get(method, default_positional)
        args = [bound[name] for name in takewhile(bound.__contains__, order)]
        taken = set(order[: len(args)])
        kwargs = {self.keyword_of(method, k): v for k, v in bound.items() if k not in taken}
        return TargetCall(self.name_of(method), tuple(args), kwargs)
