"""The one probe of a target (O10): what it has, learned once, read by every mode.

A run builds one instance of the target before anything else and records, here,
the spec constructor parameters its constructor takes, the spec methods it
offers (through the adapter's names), what it lacks of the component's optional
interface and why, and how its time is controlled.  The sequential search, the
threads and the reproductions build and call the target only from this record:
a mode never calls a method the probe did not find, never passes a parameter the
constructor does not take, and reads the groups left out from one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._components import Component

__all__ = ["Probe", "offered"]


@dataclass(frozen=True)
class Probe:
    """What the target is (immutable once made): ``accepts`` the spec constructor parameters its
    constructor takes (None: anything, a ``**kwargs`` or no signature); ``offers`` the spec methods it has
    (on its pools or children where the component has them); ``lacks`` the optional parameters and methods
    it does not have, each with why (the groups a run leaves out from the start); ``missing`` the methods
    a declared choice would need and it lacks; ``time_control``: "none", "injected" or "patched"; ``form``:
    how it is called ("global", "per-pool", or "engine": behind the engine form's shim, O12)."""

    accepts: frozenset[str] | None
    offers: frozenset[str]
    lacks: Mapping[str, str] = field(default_factory=dict)
    missing: frozenset[str] = frozenset()
    time_control: str = "none"
    form: str = "global"  # the adapter's form: "engine" for the engine's HiCacheStorage (O12)

    def takes(self, parameter: str) -> bool:
        """The constructor takes the spec parameter ``parameter``."""
        return self.accepts is None or parameter in self.accepts


def offered(component: Component, probe: Probe, left_out: Mapping[str, str], method: str) -> bool:
    """``method`` may be called in this run: the target has it, it is not left out, and no group left
    out (on request or set aside) holds one of its rules (``--leave-out M9`` stops the batches, ``M5``
    remove, clear and len), in every mode (O10)."""
    if method not in probe.offers or method in left_out:
        return False
    rules = set(component.rules_for.get(method, (method,)))
    return not any(rules & set(component.groups.get(group, ())) for group in left_out)
