"""Every bad input the components refuse (docs/SEMANTICS.md B1; M1, E1, P1, V1, F2, F5, F9, S5): executable.

Each ``refuse_bad_*`` returns None (or the input, normalized) for a good input and raises, for a bad one,
the ``TypeError`` or ``ValueError`` B1 asks for, its message beginning with the parameter or setting it
names.  The models call them before any change, the machines and the oracle try the inputs they list,
and production is held to the same answers value for value (tests/unit).  They live here, one module for
every component, so that each model keeps to its rules and stays a page; the models re-export the ones
their operations use under the names their callers know (``metadata_cache.refuse_bad_key`` is
:func:`refuse_bad_metadata_key`).

Sections: the file store's (keys, values, buffers, calls, settings), then the metadata cache's, the
existence caches', and the file evictor's.
"""

from __future__ import annotations

import grp
import math
import numbers
import os
import re
import sys
import time
from collections.abc import Container, Hashable, Iterable, Mapping, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any

from .file_names import file_name

__all__ = [
    "MAX_BYTES",
    "NAME_MAX",
    "SETTINGS",
    "refuse_bad_buffer",
    "refuse_bad_call",
    "refuse_bad_capacity",
    "refuse_bad_input",
    "refuse_bad_key",
    "refuse_bad_limits",
    "refuse_bad_metadata_key",
    "refuse_bad_metadata_keys",
    "refuse_bad_metadata_settings",
    "refuse_bad_name",
    "refuse_bad_settings",
    "refuse_bad_size",
    "refuse_bad_value",
]

MAX_BYTES = 2**63 - 1  # V1: the largest limit (a file offset); above it a limit is a ValueError
NAME_MAX = 255  # F2: the longest file name, in bytes once encoded
_FS_ENCODING = sys.getfilesystemencoding()


def _shown(value: object) -> str:
    return f"{type(value).__name__} {value!r:.100}"


def refuse_bad_key(key: object, namespace: str = "") -> None:
    """F2, S5, B1: a key of ``namespace``'s store, checked before any I/O.

    Contract: returns None, or raises (the message begins with ``key``): ``TypeError`` for a key that is
    not a ``str``; ``ValueError`` for an empty key, one containing ``/`` (or the platform's other
    separator) or NUL, one starting with ``.``, one that the filesystem encoding cannot encode strictly
    (a lone surrogate, S5), or one whose file name (F1) is over ``NAME_MAX`` bytes once encoded.
    """
    if not isinstance(key, str):
        raise TypeError(f"key must be a str, got {_shown(key)}")
    separators = ("/", "\0", *([os.altsep] if os.altsep else []))
    if not key or key.startswith(".") or any(s in key for s in separators):
        raise ValueError(
            f"key must be non-empty, without a path separator or NUL, not starting with '.', got {key!r:.100}"
        )
    try:
        size = len(file_name(key, namespace).encode(_FS_ENCODING))
    except UnicodeEncodeError:
        raise ValueError(f"key cannot be encoded as a file name, got {key!r:.100}") from None
    if size > NAME_MAX:
        raise ValueError(f"key makes a file name of {size} bytes (limit {NAME_MAX}), got {key!r:.100}")


def refuse_bad_value(value: object) -> None:
    """F2, B1: a value is ``bytes``, ``bytearray`` or a ``memoryview``.

    Contract: returns None, or raises ``TypeError`` with a message that begins with ``value``.
    """
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(f"value must be bytes, bytearray or memoryview, got {_shown(value)}")


def refuse_bad_buffer(buffer: object) -> None:
    """F2, B1: ``get_into``'s buffer is a writable bytes-like object, contiguous.

    Contract: returns None, or raises (the message begins with ``buffer``) ``TypeError`` for an object
    that is not bytes-like or is read-only, ``ValueError`` for a non-contiguous one.
    """
    try:
        view = memoryview(buffer)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"buffer must be a writable bytes-like object, got {type(buffer).__name__}") from None
    with view:
        if view.readonly:
            raise TypeError(f"buffer must be writable, got a read-only {type(buffer).__name__}")
        if not view.c_contiguous:
            raise ValueError(f"buffer must be contiguous, got a non-contiguous {type(buffer).__name__}")


def _batch(name: str, items: object) -> list[object]:
    if not isinstance(items, Iterable):
        raise TypeError(f"{name} must be an iterable, got {_shown(items)}")
    return list(items)


def refuse_bad_call(method: str, *args: object, namespace: str = "") -> None:
    """F2, F5, S5, B1: the arguments of the store's ``method``, checked before any I/O (a batch's, every
    one of them before the first).

    Contract: returns None, or raises what :func:`refuse_bad_key`, :func:`refuse_bad_value` and
    :func:`refuse_bad_buffer` raise for a key, a value or a buffer; for a batch, ``TypeError`` for
    ``keys`` (or ``values``) that are not iterable, then (``batch_set``) each value, a ``ValueError``
    naming ``values`` when there is not one per key, then each key.
    """
    if method in ("batch_set", "batch_get", "batch_exists"):
        keys = _batch("keys", args[0])
        if method == "batch_set":
            values = _batch("values", args[1])
            for value in values:
                refuse_bad_value(value)
            if len(values) != len(keys):
                counts = f"{len(keys)} keys, {len(values)} values"
                raise ValueError(f"values must have one value per key: {counts}")
        for key in keys:
            refuse_bad_key(key, namespace)
        return
    refuse_bad_key(args[0], namespace)
    if method == "set":
        refuse_bad_value(args[1])
    elif method == "get_into":
        refuse_bad_buffer(args[1])


# F9's settings: the extra_config keys, and how each is read (what the oracle's bad settings exercise)
_SIZES = ("max_size", "min_free_space", "max_value_size")
_WORDS = {"metadata_eviction": ("birth", "lru"), "layout": ("flat", "fanout")}
SETTINGS = (
    "storage_dir",
    *_SIZES,
    "eviction_ratio",
    "enable_metadata_cache",
    "metadata_ttl",
    "temp_max_age",
    "shared_group",
    *_WORDS,
)
_SIZE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*((?:[kmgtp]i?)?)b?", re.IGNORECASE)
_BOOLEANS = ("1", "true", "yes", "on", "0", "false", "no", "off")


def _size(name: str, value: object) -> None:
    """F9: a size is a non-negative int, or a number with an optional unit (a fraction needs one), at most
    ``MAX_BYTES``; an empty string is 0."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"{name} must be an int or a size string, got {_shown(value)}")
    size = value if isinstance(value, int) else 0
    if isinstance(value, str):
        if not value.strip():
            return
        found = _SIZE.fullmatch(value.strip())
        if found is None:
            raise ValueError(f"{name} must be a size such as 1048576, 200G, 1.5G or 1Gi, got {value!r}")
        number, unit = Fraction(found[1]), found[2].lower()
        if not unit and number.denominator != 1:
            raise ValueError(f"{name} without a unit must be a whole number of bytes, got {value!r}")
        scale = (1024 if unit.endswith("i") else 1000) ** (" kmgtp".index(unit[0]) if unit else 0)
        size = math.floor(number * scale)
    if not 0 <= size <= MAX_BYTES:
        raise ValueError(f"{name} must be >= 0 and at most 2**63 - 1 bytes, got {value!r}")


def _number(name: str, value: object) -> float:
    """F9: a number is an int, a float or a decimal string."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(f"{name} must be a number, got {_shown(value)}")
    try:
        return float(value.strip() if isinstance(value, str) else value)
    except (ValueError, OverflowError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None


def _setting(name: str, value: object) -> None:
    """F9, S1, F1-fanout: one ``extra_config`` setting."""
    if name in _SIZES:
        _size(name, value)
    elif name == "eviction_ratio":
        if not 0 < _number(name, value) <= 1:  # NaN fails every comparison
            raise ValueError(f"{name} must be in (0, 1], got {value!r}")
    elif name in ("metadata_ttl", "temp_max_age"):
        number = _number(name, value)
        allowed = (number == -1 and name == "metadata_ttl") or (math.isfinite(number) and number >= 0)
        if not allowed:
            what = "-1 or a finite number >= 0" if name == "metadata_ttl" else "a finite number >= 0"
            raise ValueError(f"{name} must be {what}, got {value!r}")
    elif name == "enable_metadata_cache":
        if not isinstance(value, (bool, str)):
            raise TypeError(f"{name} must be a bool or a boolean string, got {_shown(value)}")
        if isinstance(value, str) and value.strip().lower() not in _BOOLEANS:
            raise ValueError(f"{name} must be one of 1/true/yes/on or 0/false/no/off, got {value!r}")
    elif name in _WORDS:
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str, one of {_WORDS[name]}, got {_shown(value)}")
        if value.strip().lower() not in _WORDS[name]:
            raise ValueError(f"{name} must be one of {_WORDS[name]}, got {value!r}")
    elif name == "storage_dir":
        path = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
        if not isinstance(path, str):
            raise TypeError(f"{name} must be a str or os.PathLike of str, got {_shown(value)}")
        if not path or "\0" in path:
            raise ValueError(f"{name} must be a non-empty directory path without NUL, got {value!r}")
    elif name == "shared_group":
        _group(name, value)


def _group(name: str, value: object) -> None:
    """S1: a group name or a gid (an int, or a string of digits) of a group that exists."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"{name} must be a group name or a gid, got {_shown(value)}")
    text = value.strip() if isinstance(value, str) else value
    try:
        if isinstance(text, int) or text.isdigit():
            if int(text) < 0:
                raise ValueError(f"{name} must be a gid >= 0, got {value!r}")
            grp.getgrgid(int(text))
        elif not text or "\0" in text:
            raise ValueError(f"{name} must be a group name or a gid, got {value!r}")
        else:
            grp.getgrnam(text)
    except (KeyError, OverflowError):
        raise ValueError(f"{name} must name a group that exists, got {value!r}") from None


def refuse_bad_settings(
    storage_dir: object = None, namespace: object = "", extra_config: object = None
) -> None:
    """F1, F9, S1, B1: the store's constructor arguments, checked before anything is built (the
    environment is not read: only what is passed).

    Contract: returns None, or raises (each message begins with the parameter or setting it names):
    for ``extra_config``, ``TypeError`` when it is neither None nor a mapping or a key is no ``str``,
    ``ValueError`` for a key that is not one of ``SETTINGS`` (an environment-style name included), and
    for each setting F9's ``TypeError`` (a wrong type) or ``ValueError`` (a value out of its range or
    grammar: a size, a ratio in (0, 1], a TTL of -1 or >= 0, an age >= 0, a boolean word, ``birth`` or
    ``lru``, ``flat`` or ``fanout``, a directory, a group that exists); ``TypeError`` for a
    ``storage_dir`` that is neither None, a str nor a path of one, ``ValueError`` for an empty one; for
    the ``namespace`` (F1), ``TypeError`` when it is no ``str``, ``ValueError`` when it holds a separator
    or NUL, is not empty and does not start with ``_``, or cannot be encoded as part of a file name.
    """
    if extra_config is None:
        extra_config = {}
    if not isinstance(extra_config, Mapping):
        raise TypeError(f"extra_config must be a mapping or None, got {type(extra_config).__name__}")
    for key in extra_config:
        if not isinstance(key, str):
            raise TypeError(f"extra_config keys must be str, got {_shown(key)}")
        if key not in SETTINGS:
            known = ", ".join(SETTINGS)
            raise ValueError(f"extra_config has an unknown setting {key!r}; known settings: {known}")
    for key, value in extra_config.items():
        _setting(key, value)
    if storage_dir is not None:
        path = os.fspath(storage_dir) if isinstance(storage_dir, (str, os.PathLike)) else None
        if path is None:
            raise TypeError(f"storage_dir must be a str path or None, got {_shown(storage_dir)}")
        if not isinstance(path, str) or not path or "\0" in path:
            raise ValueError(f"storage_dir must be a non-empty str path without NUL, got {storage_dir!r}")
    if not isinstance(namespace, str):
        raise TypeError(f"namespace must be a str, got {_shown(namespace)}")
    if any(s in namespace for s in ("/", "\0", *([os.altsep] if os.altsep else []))):
        raise ValueError(f"namespace must not contain a path separator or NUL, got {namespace!r}")
    if namespace and not namespace.startswith("_"):
        raise ValueError(f"namespace must be empty or start with '_', got {namespace!r}")
    try:
        namespace.encode(_FS_ENCODING)
    except UnicodeEncodeError:
        raise ValueError(f"namespace cannot be encoded as part of a file name, got {namespace!r}") from None


# MetadataCache (M1, M3-M5, M9).


def refuse_bad_metadata_settings(
    ttl_seconds: object, max_entries: object = None, clock: object = time.monotonic, stats: object = False
) -> float:
    """M1, B1: the constructor's arguments, checked before anything is built; ``ttl_seconds`` as a float.

    Contract: returns ``float(ttl_seconds)``, or raises (each message begins with the parameter's name):

    * ``TypeError`` for a ``ttl_seconds`` that is a bool or no real number (an ``int``, ``float``,
      ``Fraction``, ``Decimal`` or other ``numbers.Real`` is one; a string is never parsed); ``ValueError``
      for NaN, an infinity, a negative other than -1, or a value too large for a float;
    * ``TypeError`` for a ``max_entries`` that is neither None nor an int (a bool included), ``ValueError``
      for one below 1;
    * ``TypeError`` for a ``clock`` that is not callable, or a ``stats`` that is not a bool.
    """
    if isinstance(ttl_seconds, bool) or not isinstance(ttl_seconds, (numbers.Real, Decimal)):
        kind = type(ttl_seconds).__name__
        raise TypeError(f"ttl_seconds must be a real number, got {kind} {ttl_seconds!r}")
    ttl: Any = ttl_seconds  # a real number: compared and converted as such
    if isinstance(ttl, Decimal) and not ttl.is_finite():  # a Decimal NaN refuses to be compared
        raise ValueError(f"ttl_seconds must be -1 or a finite number >= 0, got {ttl!r}")
    if ttl != -1:
        if not ttl >= 0:  # a negative, or NaN (which fails every comparison)
            raise ValueError(f"ttl_seconds must be -1 or a finite number >= 0, got {ttl!r}")
        try:
            as_float = float(ttl)
        except OverflowError:
            as_float = math.inf
        if as_float == math.inf:
            raise ValueError(f"ttl_seconds must be finite and fit a float, got {ttl!r}")
    if max_entries is not None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int):
            kind = type(max_entries).__name__
            raise TypeError(f"max_entries must be None or an int, got {kind} {max_entries!r}")
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries!r}")
    if not callable(clock):
        raise TypeError(f"clock must be callable, got {type(clock).__name__} {clock!r}")
    if not isinstance(stats, bool):
        raise TypeError(f"stats must be a bool, got {type(stats).__name__} {stats!r}")
    return -1.0 if ttl == -1 else float(ttl)


def refuse_bad_metadata_key(key: object) -> None:
    """M3-M5, B1: a key must be hashable.

    Contract: returns None, or raises ``TypeError`` with a message that begins with ``key``.
    """
    try:
        hash(key)
    except TypeError:
        raise TypeError(f"key must be hashable, got {type(key).__name__} {key!r}") from None


def refuse_bad_metadata_keys(keys: object) -> list[Hashable]:
    """M9, B1: a batch's keys as a list: ``keys`` must be iterable and each key hashable.

    Contract: returns ``list(keys)``, or raises ``TypeError`` with a message that begins with ``keys``
    (not iterable) or ``key`` (:func:`refuse_bad_metadata_key`).  The model refuses the whole batch before any
    change; M9 lets an implementation have taken the keys before a bad one first.
    """
    if not isinstance(keys, Iterable):
        raise TypeError(f"keys must be an iterable of keys, got {type(keys).__name__} {keys!r}")
    batch = list(keys)
    for key in batch:
        refuse_bad_metadata_key(key)
    return batch


# StorageExistenceCache and the pools (E1, E5, E6, E8, P1).


def refuse_bad_input(
    pool: Hashable, keep_pages: int | None = None, hashes: object = (), extra_cover: object = frozenset()
) -> None:
    """B1, before any change; each message begins with the parameter it names.

    Contract: returns None, or raises

    * ``TypeError`` for a ``pool`` that is not hashable (E1);
    * for ``invalidate_beyond`` (``keep_pages`` given), first a ``keep_pages`` that is not an int (a bool,
      a float, a non-finite number, a string): ``TypeError``; a negative one: ``ValueError`` (E6); then a
      ``hashes`` that is no sequence: ``TypeError`` (E8);
    * otherwise a ``hashes`` that is not iterable: ``TypeError`` (E8);
    * an ``extra_cover`` that is no container: ``TypeError`` (E5).
    """
    if keep_pages is not None:  # invalidate_beyond: keep_pages first (E6)
        if isinstance(keep_pages, bool) or not isinstance(keep_pages, int):
            raise TypeError(f"keep_pages must be an int, got {type(keep_pages).__name__} {keep_pages!r}")
        if keep_pages < 0:
            raise ValueError(f"keep_pages must be >= 0, got {keep_pages!r}")
        if not isinstance(hashes, Sequence):
            what = f"{type(hashes).__name__} {hashes!r}"
            raise TypeError(f"hashes must be a sequence of page hashes, got {what}")
    elif not isinstance(hashes, Iterable):
        raise TypeError(f"hashes must be an iterable of page hashes, got {type(hashes).__name__} {hashes!r}")
    if not isinstance(extra_cover, Container):
        raise TypeError(f"extra_cover must be a container, got {type(extra_cover).__name__} {extra_cover!r}")
    if not isinstance(pool, Hashable) or not _hashable(pool):
        raise TypeError(f"pool must be hashable, got {type(pool).__name__} {pool!r}")


def refuse_bad_capacity(max_entries: object) -> None:
    """E1, P1, B1: the constructor's ``max_entries``, an int ``>= 0``.

    Contract: returns None, or raises ``TypeError`` for a bool or a non-int (``None``, a float, NaN, a
    string) and ``ValueError`` for a negative int; the message begins with ``max_entries``.
    """
    if isinstance(max_entries, bool) or not isinstance(max_entries, int):
        raise TypeError(f"max_entries must be an int, got {type(max_entries).__name__} {max_entries!r}")
    if max_entries < 0:
        raise ValueError(f"max_entries must be >= 0, got {max_entries!r}")


def refuse_bad_name(name: object) -> None:
    """P1, B1: a pool's name must be hashable.

    Contract: returns None, or raises ``TypeError`` with a message that begins with ``name``.
    """
    try:
        hash(name)
    except TypeError:
        what = f"{type(name).__name__} {name!r}"
        raise TypeError(f"name must be hashable (a pool's name), got {what}") from None


def _hashable(value: object) -> bool:
    """Whether ``hash(value)`` works (a tuple holding a list is a Hashable that cannot be hashed)."""
    try:
        hash(value)
    except TypeError:
        return False
    return True


# The file evictor on its own (V1, V3).


def refuse_bad_size(nbytes: object) -> None:
    """V3, B1: the bytes of a reservation, an int ``>= 0``.

    Contract: returns None, or raises ``TypeError`` for a bool or a non-int (a float, NaN, an infinity, a
    string, None) and ``ValueError`` for a negative int; the message begins with ``nbytes``.
    """
    if isinstance(nbytes, bool) or not isinstance(nbytes, int):
        raise TypeError(f"nbytes must be an int, got {type(nbytes).__name__} {nbytes!r}")
    if nbytes < 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes!r}")


def refuse_bad_limits(
    max_size: object = 0, min_free_space: object = 0, eviction_ratio: object = 0.9, on_evict: object = None
) -> None:
    """V1, B1: the evictor's limits, checked before anything is built.

    Contract: returns None, or raises (each message begins with the parameter's name): ``TypeError`` for a
    ``max_size`` or ``min_free_space`` that is a bool or no int, ``ValueError`` for one below 0 or above
    ``MAX_BYTES``; ``TypeError`` for an ``eviction_ratio`` that is a bool or neither an int nor a float,
    ``ValueError`` for one outside (0, 1] (NaN and the infinities included); ``TypeError`` for an
    ``on_evict`` that is neither None nor callable.
    """
    for name, limit in (("max_size", max_size), ("min_free_space", min_free_space)):
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise TypeError(f"{name} must be an int, got {type(limit).__name__} {limit!r}")
        if not 0 <= limit <= MAX_BYTES:
            raise ValueError(f"{name} must be >= 0 and at most 2**63 - 1 bytes, got {limit!r}")
    if isinstance(eviction_ratio, bool) or not isinstance(eviction_ratio, (int, float)):
        kind = type(eviction_ratio).__name__
        raise TypeError(f"eviction_ratio must be a number, got {kind} {eviction_ratio!r}")
    if not 0 < eviction_ratio <= 1:  # NaN fails every comparison
        raise ValueError(f"eviction_ratio must be in (0, 1], got {eviction_ratio!r}")
    if on_evict is not None and not callable(on_evict):
        raise TypeError(f"on_evict must be callable or None, got {type(on_evict).__name__} {on_evict!r}")
