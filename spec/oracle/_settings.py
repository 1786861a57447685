"""``--settings JSON``: a run of the file-store component with the store's configuration pinned.

Without it, the machine draws each example's configuration (cap, ratio, free-space floor, metadata cache,
TTL) and ``--threads`` runs its one world (cap 6, ratio 1.0, the metadata cache on).  With it, every example
and every history runs the configuration a user runs: the settings given, each other one at the engine's
default (cap off, ratio 0.9, no floor, metadata cache off, TTL 5 s: F9).  The machine still draws its
configuration, so that its examples and their shrinking are those of an unpinned run; the pinned values
override the drawn ones (``FileStoreMachine.pinned``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ._errors import OracleUsageError

__all__ = ["DEFAULTS", "SETTINGS_COMPONENTS", "pinned"]

# F9: the engine's defaults (and the reference store's), the settings' names those of extra_config
DEFAULTS: dict[str, Any] = {
    "max_size": 0,
    "eviction_ratio": 0.9,
    "min_free_space": 0,
    "enable_metadata_cache": False,
    "metadata_ttl": 5.0,
}
SETTINGS_COMPONENTS = ("file-store",)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _why(name: str, value: Any) -> str:
    """Why ``value`` cannot be pinned for ``name`` ("" when it can)."""
    if name in ("max_size", "min_free_space"):
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        return "" if ok else "an int >= 0 (bytes; 0 turns it off)"
    if name == "eviction_ratio":
        return "" if _number(value) and 0 < value <= 1 else "a number in (0, 1]"
    if name == "enable_metadata_cache":
        return "" if isinstance(value, bool) else "true or false"
    return "" if _number(value) and (value == -1 or value >= 0) else "-1 (never expires) or a number >= 0"


def pinned(component: str, settings: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The full configuration ``settings`` pins (the engine's defaults for the keys not given), or None
    when nothing is pinned; OracleUsageError (exit 2) for another component, an unknown key or a value
    out of the setting's range."""
    if settings is None:
        return None
    if component not in SETTINGS_COMPONENTS:
        raise OracleUsageError(f"--settings is for {', '.join(SETTINGS_COMPONENTS)}, not {component}")
    if not isinstance(settings, Mapping):
        raise OracleUsageError(f"--settings must be a JSON object, got {type(settings).__name__}")
    unknown = sorted(str(k) for k in settings if k not in DEFAULTS)
    if unknown:
        raise OracleUsageError(
            f"--settings: unknown setting {', '.join(unknown)}; known: {', '.join(DEFAULTS)}"
        )
    for name, value in settings.items():
        why = _why(name, value)
        if why:
            raise OracleUsageError(f"--settings: {name} must be {why}, got {value!r}")
    return {**DEFAULTS, **settings}
