"""EngineNaming: the engine's file names for :class:`~hicache.file_store.HiCacheFile` (docs/SEMANTICS.md F10).

A store given ``naming=EngineNaming(...)`` names its files exactly as the engine's ``HiCacheFile`` does,
``<key><suffix>.bin`` with the key written as it is (nothing escaped), so that pages written by either
store read back in the other.  The default naming (``escape_key``) is untouched.  A KV page is
``<hash><suffix>.bin``, a page of another pool ``<hash>.<pool><suffix>.bin``; a key ending in
``sharded_tail`` (``.mamba``) takes ``sharded_suffix`` instead.  The keys it holds (others are a
``ValueError`` naming ``key``, before any I/O: F2, S5) are listed at :meth:`EngineNaming.check`.

Ownership (F1): the store owns only the files of its suffixes whose stem is a key of this naming that
names that very file; it never scans, counts, evicts or clears another.  Why the names cannot collide:
docs/ARCHITECTURE.md, "Design notes".

Complexity: every method O(len(key)).  Thread model: immutable after construction; any thread.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence

__all__ = ["EngineNaming"]

NAME_MAX = 255  # bytes in one file name on the filesystems the engine runs on (F2)
_FS_ENCODING = sys.getfilesystemencoding()
_SEPARATORS = ("/", "\0")  # and os.altsep, which is None (POSIX) or "/" (Windows)


def _suffix_of(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__} {value!r}")
    if not value.startswith("_") or any(s in value for s in _SEPARATORS):
        raise ValueError(f"{name} must start with '_' and hold no path separator or NUL, got {value!r}")
    try:
        value.encode(_FS_ENCODING)
    except UnicodeEncodeError:
        raise ValueError(f"{name} cannot be encoded as part of a file name, got {value!r}") from None
    return value


def check_batch(keys: list[str], check: Callable[[object], None], unplain: str, suffix_bytes: int) -> None:
    """Apply ``check`` to every key, the first bad one raising; decided at once when the keys are plain.

    Plain: all str, none empty, ASCII, and no character of ``unplain`` anywhere, so that each file name
    is the key and a suffix of ``suffix_bytes`` bytes: only a key longer than the rest of NAME_MAX can
    then be refused.  Each test is one C-level pass over the keys joined (a single character is searched
    with memchr).  Otherwise each key is checked in turn.  Both namings' ``check_all``.
    """
    try:
        joined = "".join(keys)
    except TypeError:
        pass  # a key that is not a str: check names it, in its turn
    else:
        if all(keys) and joined.isascii() and not any(c in joined for c in unplain):
            limit = NAME_MAX - suffix_bytes
            if keys and max(map(len, keys)) > limit:
                check(next(key for key in keys if len(key) > limit))  # raises
            return
    for key in keys:
        check(key)


class EngineNaming:
    """The engine's file names: ``<key><suffix>.bin``, keys written as they are.

    ``suffix`` (the engine's ``config_suffix``), ``sharded_suffix`` (its ``tp_config_suffix``, for keys
    ending in ``sharded_tail``; default ``suffix``), ``pools`` (the pool names a key may end in after a
    dot), ``owns_suffix`` (False for an MLA rank that reads the shared pages but does not own them).
    ``TypeError``/``ValueError`` naming the parameter on bad arguments.

    >>> naming = EngineNaming("_m_0_1", pools=["mamba", "swa"])
    >>> naming.name("3fa9"), naming.name("3fa9.swa"), naming.key_of("3fa9.swa_m_0_1.bin")
    ('3fa9_m_0_1.bin', '3fa9.swa_m_0_1.bin', '3fa9.swa')
    >>> naming.key_of("3fa9_q_m_0_1.bin"), naming.key_of("3fa9_m_1_2.bin")  # model "q_m"; another rank
    (None, None)
    """

    __slots__ = ("_bytes", "_ends", "_pools", "_sharded", "_suffix", "_tail", "namespace")

    def __init__(
        self,
        suffix: str,
        *,
        sharded_suffix: str | None = None,
        sharded_tail: str = ".mamba",
        pools: Iterable[str] = (),
        owns_suffix: bool = True,
    ) -> None:
        self._suffix = _suffix_of("suffix", suffix)
        sharded = suffix if sharded_suffix is None else sharded_suffix
        self._sharded = _suffix_of("sharded_suffix", sharded)
        if isinstance(pools, str):
            raise TypeError(f"pools must be an iterable of str, got str {pools!r}")
        self._pools = frozenset(pools)
        for pool in self._pools:
            if not isinstance(pool, str):
                raise TypeError(f"pools must hold str, got {type(pool).__name__} {pool!r}")
            if not pool or "." in pool or any(s in pool for s in _SEPARATORS):
                raise ValueError(f"pools must be non-empty names without '.', separator or NUL, got {pool!r}")
        known = self._pools
        tail_ok = isinstance(sharded_tail, str) and sharded_tail[:1] == "." and sharded_tail[1:] in known
        if not tail_ok:
            raise ValueError(f"sharded_tail must be '.' and one of pools, got {sharded_tail!r}")
        if not isinstance(owns_suffix, bool):
            raise TypeError(f"owns_suffix must be a bool, got {type(owns_suffix).__name__} {owns_suffix!r}")
        self._tail = sharded_tail
        ends = [self._sharded + ".bin"]
        if owns_suffix and self._suffix != self._sharded:
            ends.append(self._suffix + ".bin")
        self._ends = tuple(ends)
        # bytes of the longer suffix with ".bin": a key of at most NAME_MAX minus this many bytes always fits
        self._bytes = max(len((s + ".bin").encode(_FS_ENCODING)) for s in (self._suffix, self._sharded))
        self.namespace = self._sharded  # the rank's own: names its lock file (C6)

    def name(self, key: str) -> str:
        """Return the file name of a checked ``key``. O(len(key))."""
        if key.endswith(self._tail):
            return key + self._sharded + ".bin"
        return key + self._suffix + ".bin"

    def check(self, key: object) -> None:
        """Raise ``TypeError``/``ValueError`` naming ``key`` unless this naming holds ``key`` (F2, S5).

        It holds a non-empty ``str`` that does not start with ``.``, with no path separator and no NUL,
        whose file name encodes strictly under the filesystem encoding (S5) and fits ``NAME_MAX`` bytes
        (F2), of the form ``<page>`` or ``<page>.<pool>``: the page part holds no ``.`` and no ``_``, and
        ``<pool>`` is one of the ``pools`` given (the engine writes only such keys: hex page hashes, and
        its pools' names after a dot).
        """
        if (
            type(key) is str
            and key.isascii()
            and "_" not in key
            and "." not in key
            and "/" not in key
            and "\0" not in key
            and key
        ):
            size = len(key) + self._bytes  # a plain page hash, the common case: each test one C-level pass
        else:
            size = self._size(key)
        if size > NAME_MAX:
            raise ValueError(f"key makes a file name of {size} bytes (limit {NAME_MAX}), got {key!r:.100}")

    def _size(self, key: object) -> int:
        """Return the bytes of the file name of any ``key``, raising as ``check`` does (its size aside)."""
        if not isinstance(key, str):
            raise TypeError(f"key must be a str, got {type(key).__name__} {key!r}")
        page, dot, pool = key.partition(".")
        if not page or "_" in page or any(s in key for s in _SEPARATORS):
            raise ValueError(
                "key must be a page hash without '_', path separator or NUL, optionally '.' and a pool's"
                f" name, got {key!r:.100}"
            )
        if dot and pool not in self._pools:
            raise ValueError(f"key ends in a pool this store does not know ({pool!r:.40}), got {key!r:.100}")
        try:
            return len(key.encode(_FS_ENCODING)) + self._bytes  # strict: no lone surrogate (S5)
        except UnicodeEncodeError:
            raise ValueError(f"key cannot be encoded as a file name, got {key!r:.100}") from None

    def check_all(self, keys: list[str]) -> None:
        """Apply ``check`` to every key, the first bad one raising (``check_batch``).

        Plain keys are page hashes: no ``.``, ``_``, ``/`` or NUL.
        """
        check_batch(keys, self.check, "._/\0", self._bytes)

    def key_of(self, name: str) -> str | None:
        """Return the key of the file ``name`` when it is a file this naming owns, else None (F1)."""
        for end in self._ends:
            if name.endswith(end):
                key = name[: -len(end)]
                try:
                    self.check(key)
                except ValueError:
                    return None
                if self.name(key) == name:
                    return key
        return None

    def keys_of(self, names: list[str]) -> Sequence[str | None]:
        """Return ``key_of`` of each of ``names``, in order (a listing at a time, as start-up reads one)."""
        return list(map(self.key_of, names))

    def __repr__(self) -> str:
        """Show the suffixes and pools, as the constructor takes them."""
        pools = sorted(self._pools)
        return f"EngineNaming({self._suffix!r}, sharded_suffix={self._sharded!r}, pools={pools!r})"
