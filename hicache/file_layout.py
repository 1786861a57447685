"""FileLayout: where a HiCacheFile puts each key's file (docs/SEMANTICS.md F1, F2).

A layout is a naming and a placement.  The naming turns a key into a file name and back, and decides which
keys are valid (F2, S5): :class:`FileNaming`, ``<escape_key(key)><namespace>.bin`` (F1), by default, or the
engine's :class:`~hicache.file_naming.EngineNaming` (F10), which has the same methods.  The placement is
``flat`` (every file in the storage directory) or ``fanout`` (two levels of subdirectories down, named by
the CRC-32 of the file name, F1-fanout): :class:`FileLayout` makes the subdirectories on demand (each
checked by S1's rules, ``FileTrust``) and walks them, one walk for start-up and for ``clear``.

A variant that names differently is a subclass of :class:`FileNaming` set as the store's ``key_naming``
class attribute.

Complexity: naming O(len(key)); ``path`` one CRC-32 with ``fanout``; ``prepare`` at most two ``mkdir`` per
subdirectory over the store's life; ``leaves`` O(subdirectories + entries).  Thread model: the naming is
immutable; the placement's record of ready subdirectories is a byte per subdirectory, written without a
lock (a lost write costs one more ``mkdir``).
"""

from __future__ import annotations

import errno
import logging
import os
import re
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import repeat

from hicache.file_naming import NAME_MAX, EngineNaming, check_batch
from hicache.file_trust import FileTrust
from hicache.fs import DirEntry, FileSystem

__all__ = [
    "NAMESPACE_MARK",
    "NAME_MAX",
    "FileLayout",
    "FileNaming",
    "escape_key",
    "fanout_dirs",
    "is_fanout_dir_name",
    "is_temp_name",
    "key_of_name",
]

logger = logging.getLogger("hicache.file_store")  # the store's log: its collaborators speak for it

NAMESPACE_MARK = "_"  # a namespace starts with it; keys escape it (see escape_key)
_ESCAPED = re.compile(r"%(25|5F)")
_FS_ENCODING = sys.getfilesystemencoding()
_TEMP_NAME = re.compile(r"\.[0-9a-f]{12}\.tmp")
# F1-fanout: the names of the fanout subdirectories of each level
_HEX_BYTE = [f"{i:02x}" for i in range(256)]
_HEX_INDEX = {name: i for i, name in enumerate(_HEX_BYTE)}
# F1-fanout: a ready mark per subdirectory, [top] for the 256 of the first level, [256 + top * 256 + sub]
# for those under them
_READY_MARKS = 256 + 256 * 256


def escape_key(key: str) -> str:
    """Return the key as it appears in a file name, with ``%`` and ``_`` escaped.

    So the first ``_`` of a name always starts its namespace (F1: no two namespaces can name the same file).

    >>> escape_key("3fa9"), escape_key("a_b%c")
    ('3fa9', 'a%5Fb%25c')
    """
    if "%" in key or NAMESPACE_MARK in key:
        return key.replace("%", "%25").replace(NAMESPACE_MARK, "%5F")
    return key


def key_of_name(name: str, namespace: str) -> str | None:
    """Return the key of the file ``name`` if it belongs to ``namespace``, else None (F1).

    >>> key_of_name("a%5Fb_r1.bin", "_r1"), key_of_name("x_b_a.bin", "_a"), key_of_name("k_r1.bin", "")
    ('a_b', None, None)
    """
    if not name.endswith(".bin") or name.startswith("."):
        return None
    part, mark, rest = name[:-4].partition(NAMESPACE_MARK)  # the first "_" starts the namespace
    if mark + rest != namespace or not part:
        return None
    if "%" not in part:
        return part  # nothing escaped (and no "_": the first one starts the namespace)
    key = _ESCAPED.sub(lambda m: "%" if m[1] == "25" else NAMESPACE_MARK, part)
    return key if escape_key(key) == part else None  # a stray "%" is not a name this store writes


def fanout_dirs(name: str) -> tuple[str, str]:
    """Return the two subdirectories of the file ``name`` in the fanout layout (F1-fanout).

    They are the first and second bytes of the CRC-32 of its encoded name, each as two lower-case hex
    digits (stable across runs and platforms).

    >>> fanout_dirs("3fa9.bin"), fanout_dirs("3fa9_r1.bin")
    (('fc', '14'), ('cd', 'd1'))
    """
    crc = zlib.crc32(os.fsencode(name))
    return _HEX_BYTE[crc >> 24], _HEX_BYTE[crc >> 16 & 0xFF]


def is_fanout_dir_name(name: str) -> bool:
    """F1-fanout: a name a fanout subdirectory has (two lower-case hex digits).

    >>> is_fanout_dir_name("0c"), is_fanout_dir_name("0C"), is_fanout_dir_name("0c1")
    (True, False, False)
    """
    return name in _HEX_INDEX


def is_temp_name(name: str) -> bool:
    """Tell whether ``name`` is a store's temp file name, exactly ``.<12 lower-case hex digits>.tmp`` (S6).

    Never a key's file, since keys cannot start with a dot, and not another program's ``.state.tmp``.

    >>> is_temp_name(".0123456789ab.tmp"), is_temp_name(".other-program-state.tmp"), is_temp_name(".ab.tmp")
    (True, False, False)
    """
    return len(name) == 17 and _TEMP_NAME.fullmatch(name) is not None


class FileNaming:
    """The default names: ``<escape_key(key)><namespace>.bin`` (F1); the keys it holds (F2, S5).

    ``namespace`` is empty or starts with ``_``, and encodes strictly (``ValueError`` otherwise).
    """

    __slots__ = ("_suffix", "_suffix_bytes", "namespace")

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self._suffix = namespace + ".bin"
        try:
            self._suffix_bytes = len(self._suffix.encode(_FS_ENCODING))  # strict (S5)
        except UnicodeEncodeError:
            raise ValueError(
                f"namespace cannot be encoded as part of a file name, got {namespace!r}"
            ) from None

    def name(self, key: str) -> str:
        """Return the file name of a checked ``key``.  O(len(key))."""
        return escape_key(key) + self._suffix

    def check(self, key: object) -> None:
        """F2, S5: non-empty str, no separator, NUL or leading dot, strictly encodable, name <= NAME_MAX."""
        if not isinstance(key, str):
            raise TypeError(f"key must be a str, got {type(key).__name__} {key!r}")
        # "/" is also os.altsep wherever there is one (None on POSIX, "/" on Windows)
        if not key or key[0] == "." or "/" in key or "\0" in key:
            raise ValueError(
                "key must be a non-empty str without a path separator or NUL, not starting"
                f" with '.', got {key!r:.100}"
            )
        if key.isascii():
            # Bytes of the escaped name: at most 3 per char ("_" -> "%5F"); exact only when it may matter.
            if len(key) * 3 + self._suffix_bytes > NAME_MAX:
                name_bytes = len(escape_key(key)) + self._suffix_bytes
                if name_bytes > NAME_MAX:
                    raise ValueError(
                        f"key makes a file name of {name_bytes} bytes (limit {NAME_MAX}), got {key!r:.100}"
                    )
            return
        try:
            # S5: strict, so that no lone surrogate passes (os.fsencode's surrogateescape would map
            # "\udcc3\udca9" to the bytes of "é": two keys, one file).
            name_bytes = len(escape_key(key).encode(_FS_ENCODING)) + self._suffix_bytes
        except UnicodeEncodeError:
            raise ValueError(f"key cannot be encoded as a file name, got {key!r:.100}") from None
        if name_bytes > NAME_MAX:
            raise ValueError(
                f"key makes a file name of {name_bytes} bytes (limit {NAME_MAX}), got {key!r:.100}"
            )

    def check_all(self, keys: list[str]) -> None:
        """Apply ``check`` to every key, the first bad one raising (``check_batch``).

        Plain keys have no ``/``, NUL, ``.``, ``_`` or ``%`` (so no leading dot and nothing escaped): each
        name is then the key and the suffix.
        """
        check_batch(keys, self.check, "/\0." + NAMESPACE_MARK + "%", self._suffix_bytes)

    def key_of(self, name: str) -> str | None:
        """Return the key of the node ``name`` when it is named like a file of this namespace (F1), else None.

        A temp file never has one: no key starts with a dot.  ``keys_of`` of the one name.
        """
        return self.keys_of([name])[0]

    def keys_of(self, names: list[str]) -> Sequence[str | None]:
        """Return ``key_of`` of each of ``names``, in order: the naming's one rule, for a listing at a time.

        When every name is plain (it ends with this namespace's suffix, and its part before it is not
        empty and holds no ``_``, ``%`` or ``.``), each key is that part, decided on the parts joined:
        one C-level pass per test, and no call per name (the start-up scan's inner loop, docs/SEMANTICS.md
        "F8 at scale").  Otherwise each name is read by ``key_of_name``.  A variant that names differently
        overrides this method (``key_of`` follows).
        """
        suffix = self._suffix
        stem = slice(-len(suffix))
        if all(map(str.endswith, names, repeat(suffix))):
            parts = [name[stem] for name in names]
            joined = "".join(parts)
            if all(parts) and "_" not in joined and "%" not in joined and "." not in joined:
                return parts  # nothing escaped, no other namespace (the first "_" is ours), no dot file
        namespace = self.namespace
        return [key_of_name(name, namespace) for name in names]


class FileLayout:
    """Where the files of one naming lie in ``directory``: flat, or two subdirectories down (``fanout``).

    ``trust`` checks each fanout subdirectory made or met (S1).
    """

    __slots__ = ("__weakref__", "_prefix", "_ready", "directory", "fanout", "fs", "marker", "naming", "trust")

    def __init__(
        self,
        directory: str,
        naming: FileNaming | EngineNaming,
        *,
        fanout: bool,
        fs: FileSystem,
        trust: FileTrust,
    ) -> None:
        self.directory = directory
        self.naming = naming
        self.fanout = fanout
        self.fs = fs
        self.trust = trust
        self.marker = os.path.join(directory, f".hicache{naming.namespace}.fanout")
        self._prefix = os.path.join(directory, "")
        # F1-fanout: the fanout subdirectories made or found and checked (_READY_MARKS).
        # Made for a flat store too (it never reads them): 64 KiB, once per store.
        self._ready = bytearray(_READY_MARKS)

    def path(self, key: str) -> str:
        """Return the path of a checked ``key``'s file."""
        name = self.naming.name(key)
        if self.fanout:
            top, sub = fanout_dirs(name)
            return f"{self.directory}/{top}/{sub}/{name}"
        return self._prefix + name

    def check_keys(self, keys: list[str]) -> None:
        """Apply the naming's ``check`` to every key, the first bad one raising (its ``check_all``)."""
        self.naming.check_all(keys)

    def fanout_marker_met(self) -> ValueError:
        """Return the error that refuses, in a flat store, a namespace written with ``fanout`` (F1-fanout)."""
        return ValueError(
            f"namespace {self.naming.namespace!r} of storage directory {self.directory} was written with"
            f" layout 'fanout' (its marker {self.marker} is there), but this store's layout is"
            " 'flat' (setting layout, HICACHE_FILE_LAYOUT): open it with layout='fanout', or remove the"
            " marker once no page of the namespace is left in its subdirectories"
        )

    def prepare(self, where: str) -> None:
        """Make the directory ``where`` a file is written in, unless made or checked already (F1-fanout).

        Nothing in the flat layout.  Each subdirectory gets the directory's mode and group; then what is
        there is checked (S1's rules).  ``PermissionError`` naming it otherwise: the write is refused (F3).
        """
        if not self.fanout:
            return
        parent = os.path.dirname(where)
        top = _HEX_INDEX[os.path.basename(parent)]
        index = 256 + top * 256 + _HEX_INDEX[os.path.basename(where)]
        if self._ready[index]:
            return
        trust = self.trust
        for slot, directory in ((top, parent), (index, where)):
            if not self._ready[slot]:
                st = self.fs.mkdir(directory, trust.dir_mode, trust.group)
                problem = trust.subdir_problem(st)
                if problem is not None:
                    raise PermissionError(errno.EPERM, f"fanout subdirectory {problem}: not used", directory)
                self._ready[slot] = True

    def forget_ready(self, where: str) -> None:
        """Forget that the subdirectories of ``where`` are there (it went): ``prepare`` makes them again."""
        parent = os.path.dirname(where)
        top = _HEX_INDEX[os.path.basename(parent)]
        self._ready[top] = self._ready[256 + top * 256 + _HEX_INDEX[os.path.basename(where)]] = False

    def leaves(
        self,
        top: Iterable[DirEntry],
        *,
        unlisted: Callable[[str, OSError], None],
        mark_ready: bool = False,
    ) -> Iterator[tuple[str, list[DirEntry], tuple[str, str]]]:
        """Yield every trusted second-level subdirectory under those of ``top`` (F1-fanout), walked once.

        Each as (path, its listing, its place: the two subdirectory names), each subdirectory checked as
        it is met (S1), and with ``mark_ready`` recorded as ready.  A leaf's listing is read whole (a few
        hundred entries even at millions of pages), so that a failure to list anything under a first-level
        subdirectory is met here: ``unlisted(its path, the error)``, and the rest of it skipped.
        """
        directory, fs, trust, ready = self.directory, self.fs, self.trust, self._ready
        for level1 in top:
            if level1.kind != "dir" or level1.name not in _HEX_INDEX:
                continue
            if not trust.trusted_subdir(directory, level1):
                continue
            path1 = os.path.join(directory, level1.name)
            index1 = _HEX_INDEX[level1.name]
            if mark_ready:
                ready[index1] = True
            try:
                for level2 in fs.scandir(path1):
                    if level2.kind != "dir" or level2.name not in _HEX_INDEX:
                        continue
                    if not trust.trusted_subdir(path1, level2):
                        continue
                    path2 = os.path.join(path1, level2.name)
                    if mark_ready:
                        ready[256 + index1 * 256 + _HEX_INDEX[level2.name]] = True
                    yield path2, list(fs.scandir(path2)), (level1.name, level2.name)
            except OSError as exc:
                unlisted(path1, exc)

    def remove_temp(self, temp: str) -> None:
        """Remove the temp file ``temp`` (S6); a failure is logged, the file left for a later start-up."""
        try:
            self.fs.unlink(temp)
        except FileNotFoundError:
            pass  # the write failed before creating it
        except OSError as exc:
            # EPERM/EIO...: a leftover temp file; start-up removes it once it is old (F8).
            logger.warning("file store: cannot remove temp file %r: %s", temp, exc)

    def pages(self) -> tuple[list[tuple[str, DirEntry, str]], int]:
        """List the nodes of this naming where its keys' probes look (F7: what ``clear`` removes).

        Answers (each node named like a file of this naming, any kind and owner, as (the directory it is
        in, its entry, its key); how many subdirectories could not be listed).  The directory itself
        (flat), or every trusted subdirectory of both levels (fanout: a page that does not hash where it
        lies is not ours to remove).  OSError when the directory itself cannot be listed.
        """
        directory, keys_of = self.directory, self.naming.keys_of
        top = self.fs.scandir(directory)
        if not self.fanout:
            listing = list(top)
            keys = keys_of([e.name for e in listing])  # one per entry, in order
            return [(directory, listing[i], k) for i, k in enumerate(keys) if k is not None], 0
        unlisted: list[str] = []

        def skip(path: str, exc: OSError) -> None:
            logger.warning("file store: cannot list the fanout subdirectory %r to clear it: %s", path, exc)
            unlisted.append(path)

        found = [
            (where, entries[i], k)
            for where, entries, place in self.leaves(top, unlisted=skip)
            for i, k in enumerate(keys_of([e.name for e in entries]))
            if k is not None and fanout_dirs(entries[i].name) == place
        ]
        return found, len(unlisted)
