"""Configuration of the file store: extra_config > environment > defaults (docs/SEMANTICS.md F9, B1).

:class:`~hicache.file_store.HiCacheFile` reads its settings once, at construction, through
:func:`load_file_config`; every invalid value is a ``ValueError`` (``TypeError`` for a wrong type in
``extra_config``) naming the setting and the value, never a silent fallback to a default.  The settings,
their environment variables (and the engine's ``SGLANG_HICACHE_FILE_BACKEND_`` aliases) and defaults are
the table of F9; the clauses each one serves: S1, S2 (``shared_group``), S4 (``max_value_size``), M6,
M6-lru (``metadata_eviction``), F1-fanout (``layout``), F8, F8-bg (``startup_scan``).  Sizes:
:func:`parse_size`.  The decisions where the clauses leave room: docs/ARCHITECTURE.md, "Design notes".

Complexity: O(number of settings).  Thread model: pure functions over the mappings they are given;
``os.environ`` is read once per call, at the start.
"""

from __future__ import annotations

import grp
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from hicache._validate import shown
from hicache.file_evictor import check_bytes_limit

__all__ = [
    "ALIAS_ENV_PREFIX",
    "DEFAULT_MAX_VALUE_SIZE",
    "DEFAULT_STORAGE_DIR",
    "ENV_PREFIX",
    "LAYOUTS",
    "SETTING_NAMES",
    "STARTUP_SCANS",
    "FileStoreConfig",
    "load_file_config",
    "parse_size",
]

ENV_PREFIX = "HICACHE_FILE_"
ALIAS_ENV_PREFIX = "SGLANG_HICACHE_FILE_BACKEND_"
DEFAULT_STORAGE_DIR = "/tmp/hicache"
DEFAULT_MAX_VALUE_SIZE = 16 * 1024**3  # S4: the largest read when neither max_value_size nor max_size is set

# extra_config key -> suffix of its environment variable names.
_SETTINGS: dict[str, str] = {
    "storage_dir": "STORAGE_DIR",
    "max_size": "MAX_SIZE",
    "min_free_space": "MIN_FREE_SPACE",
    "eviction_ratio": "EVICTION_RATIO",
    "enable_metadata_cache": "ENABLE_METADATA_CACHE",
    "metadata_ttl": "METADATA_TTL",
    "temp_max_age": "TEMP_MAX_AGE",
    "shared_group": "SHARED_GROUP",
    "max_value_size": "MAX_VALUE_SIZE",
    "metadata_eviction": "METADATA_EVICTION",
    "layout": "LAYOUT",
    "startup_scan": "STARTUP_SCAN",
}
SETTING_NAMES = tuple(_SETTINGS)  # the extra_config keys load_file_config takes
_EVICTIONS = ("birth", "lru")  # hicache.metadata_cache.EVICTIONS, without importing the cache here
LAYOUTS = ("flat", "fanout")  # F1-fanout
STARTUP_SCANS = ("blocking", "background")  # F8, F8-bg

_UNITS: dict[str, int] = {
    "": 1,
    "k": 1000,
    "m": 1000**2,
    "g": 1000**3,
    "t": 1000**4,
    "p": 1000**5,
    "ki": 1024,
    "mi": 1024**2,
    "gi": 1024**3,
    "ti": 1024**4,
    "pi": 1024**5,
}
# A plain decimal number (no sign, no exponent, no inf/nan) and an optional unit with an optional "B".
_SIZE = re.compile(r"(?P<number>\d+(?:\.\d*)?|\.\d+)\s*(?P<unit>(?:[kmgtp]i?)?)b?", re.IGNORECASE)
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True)
class FileStoreConfig:
    """The validated settings of one file store (F9); construction checks every field (B1).

    >>> FileStoreConfig("/tmp/hicache", 0, 0, 0.9, False, 5.0).temp_max_age
    3600.0
    """

    storage_dir: str
    max_size: int
    min_free_space: int
    eviction_ratio: float
    enable_metadata_cache: bool
    metadata_ttl: float
    temp_max_age: float = 3600.0
    shared_group: int | None = None  # a gid (S1); None: the directory and its files are private
    max_value_size: int = 0  # S4; 0: the default (see effective_max_value_size)
    metadata_eviction: str = "birth"  # M6 ("birth") or M6-lru ("lru")
    layout: str = "flat"  # F1-fanout: "flat" (the engine's format) or "fanout"
    startup_scan: str = "blocking"  # F8 ("blocking") or F8-bg ("background")

    @property
    def effective_max_value_size(self) -> int:
        """S4: ``max_value_size`` when set, else ``max_size`` when set, else 16 GiB."""
        return self.max_value_size or self.max_size or DEFAULT_MAX_VALUE_SIZE

    def __post_init__(self) -> None:
        """Check every field: ``TypeError``/``ValueError`` naming the setting and showing the value (B1)."""
        if not isinstance(self.storage_dir, str):
            raise TypeError(
                f"storage_dir must be a str, got {type(self.storage_dir).__name__} {shown(self.storage_dir)}"
            )
        _check_storage_dir("storage_dir", self.storage_dir)
        if self.shared_group is not None and (
            isinstance(self.shared_group, bool) or not isinstance(self.shared_group, int)
        ):
            raise TypeError(
                "shared_group must be a gid (int) or None, got"
                f" {type(self.shared_group).__name__} {shown(self.shared_group)}"
            )
        if self.shared_group is not None and self.shared_group < 0:
            raise ValueError(f"shared_group must be a gid >= 0, got {shown(self.shared_group)}")
        for name in ("max_size", "min_free_space", "max_value_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, got {type(value).__name__} {shown(value)}")
            if value < 0:
                raise ValueError(f"{name} must be >= 0 bytes, got {shown(value)}")
            check_bytes_limit(name, value)
        if not isinstance(self.enable_metadata_cache, bool):
            raise TypeError(
                "enable_metadata_cache must be a bool, got"
                f" {type(self.enable_metadata_cache).__name__} {shown(self.enable_metadata_cache)}"
            )
        if not isinstance(self.metadata_eviction, str):
            raise TypeError(
                "metadata_eviction must be a str, 'birth' or 'lru', got"
                f" {type(self.metadata_eviction).__name__} {shown(self.metadata_eviction)}"
            )
        if self.metadata_eviction not in _EVICTIONS:
            raise ValueError(
                f"metadata_eviction must be 'birth' or 'lru', got {shown(self.metadata_eviction)}"
            )
        if not isinstance(self.layout, str):
            kind = type(self.layout).__name__
            raise TypeError(f"layout must be a str, 'flat' or 'fanout', got {kind} {shown(self.layout)}")
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout must be 'flat' or 'fanout', got {shown(self.layout)}")
        if not isinstance(self.startup_scan, str):
            given = f"{type(self.startup_scan).__name__} {shown(self.startup_scan)}"
            raise TypeError(f"startup_scan must be a str, 'blocking' or 'background', got {given}")
        if self.startup_scan not in STARTUP_SCANS:
            raise ValueError(
                f"startup_scan must be 'blocking' or 'background', got {shown(self.startup_scan)}"
            )
        for name in ("eviction_ratio", "metadata_ttl", "temp_max_age"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{name} must be a number, got {type(value).__name__} {shown(value)}")
            object.__setattr__(self, name, _NUMBER_CHECKS[name](name, value, value))


def parse_size(setting: str, value: object) -> int:
    """Return the bytes of an int or a size string; ``""`` and 0 mean 0 ("disabled").

    A non-negative int, or a string of a number and an optional unit.  ``K M G T P`` are decimal (powers
    of 1000, as disk vendors and ``df -H`` count); ``Ki Mi Gi Ti Pi`` are binary (powers of 1024).  Units
    are case-insensitive and may end in ``B`` (``200GB``, ``1GiB``).  Fractions are allowed with a unit
    and round down to whole bytes (``1.5G`` is 1_500_000_000); without a unit the number must be a whole
    number of bytes.

    Raises ``TypeError`` for a type other than int/str, ``ValueError`` (naming
    ``setting`` and ``value``) for anything that is not a non-negative size.

    >>> parse_size("max_size", "200G"), parse_size("max_size", "1Gi"), parse_size("max_size", "1.5G")
    (200000000000, 1073741824, 1500000000)
    >>> parse_size("max_size", "1048576"), parse_size("max_size", ""), parse_size("max_size", 0)
    (1048576, 0, 0)
    """
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(
            f"{setting} must be an int or a size string, got {type(value).__name__} {shown(value)}"
        )
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{setting} must be >= 0 bytes, got {shown(value)}")
        return check_bytes_limit(setting, value)
    text = value.strip()
    if not text:
        return 0
    match = _SIZE.fullmatch(text)
    if match is None:
        raise ValueError(
            f"{setting} must be a size such as 1048576, 200G, 1.5G or 1Gi (K/M/G/T/P decimal,"
            f" Ki/Mi/Gi/Ti/Pi binary), got {shown(value)}"
        )
    unit = match["unit"].lower()
    amount = Fraction(match["number"]) * _UNITS[unit]
    if not unit and amount.denominator != 1:
        raise ValueError(f"{setting} without a unit must be a whole number of bytes, got {shown(value)}")
    return check_bytes_limit(setting, math.floor(amount), value)


def load_file_config(
    extra_config: Mapping[str, object] | None = None,
    environ: Mapping[str, str] | None = None,
) -> FileStoreConfig:
    """Return the file store's settings: ``extra_config`` > ``environ`` (default ``os.environ``) > defaults.

    Raises ``ValueError`` naming the setting and the value for an invalid
    value, an unknown ``extra_config`` key or conflicting alias variables;
    ``TypeError`` for a wrong type in ``extra_config`` (B1).

    >>> config = load_file_config({"max_size": "1Gi"}, environ={"HICACHE_FILE_MAX_SIZE": "5G"})
    >>> config.max_size, config.storage_dir, config.eviction_ratio
    (1073741824, '/tmp/hicache', 0.9)
    """
    if extra_config is None:
        extra_config = {}
    elif not isinstance(extra_config, Mapping):
        raise TypeError(f"extra_config must be a mapping or None, got {type(extra_config).__name__}")
    env: Mapping[str, str] = dict(os.environ) if environ is None else environ
    for key in extra_config:
        if not isinstance(key, str):
            raise TypeError(f"extra_config keys must be str, got {type(key).__name__} {shown(key)}")
        if key not in _SETTINGS:
            raise ValueError(
                f"extra_config has an unknown setting {shown(key)} (value {shown(extra_config[key])});"
                f" known settings: {', '.join(_SETTINGS)}"
            )

    def pick(name: str) -> tuple[str, object] | None:
        """(where it came from, raw value) for ``name``, or None when nothing sets it."""
        if name in extra_config:
            return f"extra_config[{name!r}]", extra_config[name]
        return _from_environment(env, name)

    storage_dir = DEFAULT_STORAGE_DIR
    if (found := pick("storage_dir")) is not None:
        storage_dir = _parse_storage_dir(*found)
    sizes = {"max_size": 0, "min_free_space": 0, "max_value_size": 0}
    for name in sizes:
        if (found := pick(name)) is not None:
            sizes[name] = parse_size(*found)
    numbers = {"eviction_ratio": 0.9, "metadata_ttl": 5.0, "temp_max_age": 3600.0}
    for name in numbers:
        if (found := pick(name)) is not None:
            numbers[name] = _NUMBER_CHECKS[name](found[0], _parse_number(*found), found[1])
    enable_metadata_cache = False
    if (found := pick("enable_metadata_cache")) is not None:
        enable_metadata_cache = _parse_bool(*found)
    shared_group = None
    if (found := pick("shared_group")) is not None:
        shared_group = parse_group(*found)
    metadata_eviction = "birth"
    if (found := pick("metadata_eviction")) is not None:
        metadata_eviction = _parse_word(*found, _EVICTIONS)
    layout = "flat"
    if (found := pick("layout")) is not None:
        layout = _parse_word(*found, LAYOUTS)
    startup_scan = "blocking"
    if (found := pick("startup_scan")) is not None:
        startup_scan = _parse_word(*found, STARTUP_SCANS)
    return FileStoreConfig(
        storage_dir=storage_dir,
        max_size=sizes["max_size"],
        min_free_space=sizes["min_free_space"],
        eviction_ratio=numbers["eviction_ratio"],
        enable_metadata_cache=enable_metadata_cache,
        metadata_ttl=numbers["metadata_ttl"],
        temp_max_age=numbers["temp_max_age"],
        shared_group=shared_group,
        max_value_size=sizes["max_value_size"],
        metadata_eviction=metadata_eviction,
        layout=layout,
        startup_scan=startup_scan,
    )


def parse_group(setting: str, value: object) -> int:
    """S1: the gid of ``value``, a group name or a gid (int or digits) of a group that exists.

    Raises ``TypeError`` for another type, ``ValueError`` naming ``setting`` for an unknown
    group, a negative gid or an empty string.
    """
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"{setting} must be a group name or a gid, got {type(value).__name__} {shown(value)}")
    text = value.strip() if isinstance(value, str) else value
    try:
        if isinstance(text, int) or text.isdigit():
            gid = int(text)
            if gid < 0:
                raise ValueError(f"{setting} must be a gid >= 0, got {shown(value)}")
            return grp.getgrgid(gid).gr_gid
        if not text or "\0" in text:  # getgrnam's own ValueError for a NUL would not name the setting
            raise ValueError(f"{setting} must be a group name or a gid, got {shown(value)}")
        return grp.getgrnam(text).gr_gid
    except (KeyError, OverflowError):
        raise ValueError(f"{setting} must name a group that exists, got {shown(value)}") from None


def _from_environment(env: Mapping[str, str], setting: str) -> tuple[str, str] | None:
    """(where, value) of ``HICACHE_FILE_<SETTING>`` or its alias; both set and different is a ValueError."""
    name, alias = ENV_PREFIX + _SETTINGS[setting], ALIAS_ENV_PREFIX + _SETTINGS[setting]
    value, alias_value = env.get(name), env.get(alias)
    if value is not None and alias_value is not None and value != alias_value:
        raise ValueError(
            f"{setting}: {name}={shown(value)} and its alias {alias}={shown(alias_value)} disagree;"
            " set one of them"
        )
    if value is not None:
        return f"{setting} (from {name})", value
    if alias_value is not None:
        return f"{setting} (from {alias})", alias_value
    return None


def _check_storage_dir(setting: str, path: str) -> str:
    if not path:
        raise ValueError(f"{setting} must be a non-empty directory path, got {shown(path)}")
    if "\0" in path:
        raise ValueError(f"{setting} must not contain a NUL character, got {shown(path)}")
    return path


def _parse_storage_dir(setting: str, value: object) -> str:
    if isinstance(value, (str, os.PathLike)):
        path = os.fspath(value)
        if isinstance(path, str):
            return _check_storage_dir(setting, path)
    raise TypeError(
        f"{setting} must be a str or os.PathLike of str, got {type(value).__name__} {shown(value)}"
    )


def _parse_number(setting: str, value: object) -> float:
    """Return a float from an int, a float or a decimal string (range checks come after)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(f"{setting} must be a number, got {type(value).__name__} {shown(value)}")
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            raise ValueError(f"{setting} must be a number, got {shown(value)}") from None
    try:
        return float(value)
    except OverflowError:  # an int too large for a float is out of every range anyway
        raise ValueError(f"{setting} is out of range, got {shown(value)}") from None


def _parse_word(setting: str, value: object, words: tuple[str, str]) -> str:
    """Return which of two ``words`` ``value`` is, case-insensitive, surrounding blanks ignored.

    The pairs: M6/M6-lru's ``birth`` or ``lru``, F1-fanout's ``flat`` or ``fanout``, F8-bg's ``blocking``
    or ``background``.
    """
    choices = f"{words[0]!r} or {words[1]!r}"
    if not isinstance(value, str):
        raise TypeError(f"{setting} must be a str, {choices}, got {type(value).__name__} {shown(value)}")
    word = value.strip().lower()
    if word not in words:
        raise ValueError(f"{setting} must be {choices}, got {shown(value)}")
    return word


def _parse_bool(setting: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    if not isinstance(value, str):
        raise TypeError(
            f"{setting} must be a bool or a boolean string, got {type(value).__name__} {shown(value)}"
        )
    word = value.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ValueError(f"{setting} must be one of 1/true/yes/on or 0/false/no/off, got {shown(value)}")


# Range checks: (setting, parsed value, the value as given, for the message) -> the value as a float.


def _check_ratio(setting: str, value: float, given: object) -> float:
    if not (0.0 < value <= 1.0):  # also rejects NaN, which fails every comparison
        raise ValueError(f"{setting} must be in (0, 1], got {shown(given)}")
    return float(value)


def _check_ttl(setting: str, value: float, given: object) -> float:
    if value == -1:
        return -1.0
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{setting} must be -1 (never expires) or a finite number >= 0, got {shown(given)}")
    return float(value)


def _check_age(setting: str, value: float, given: object) -> float:
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{setting} must be a finite number of seconds >= 0, got {shown(given)}")
    return float(value)


_NUMBER_CHECKS = {"eviction_ratio": _check_ratio, "metadata_ttl": _check_ttl, "temp_max_age": _check_age}
