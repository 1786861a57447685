"""Pure functions of the file-store model that carry PEP 316 contracts (docs/SEMANTICS.md F1, F8, V2-V6, C3).

Two kinds: the names (F1: a key's file and back, two stores naming one file; F8: a temp file, the pages
of a directory listing oldest first, the stale temps; F8-bg: the start-up listing a background scan reads,
:class:`Listing`, the one stateful helper, and what a batch of it adopts), and the evictor's passes over its
entries (V2: their total; V4, C5: an entry made the most recent, or put in flight or out of it, in place;
V3, V5: the victims a cap or a free-space floor picks).  CrossHair checks each one with a ``post:`` alone
(``tests/contracts``); :class:`.file_store.FileStoreModel` and :class:`.file_evictor.EvictorModel`
apply them, one operation at a time.
"""

from __future__ import annotations

import math
import os
import re
import zlib
from collections.abc import Iterable, Mapping, Set

__all__ = [
    "Entry",
    "Listing",
    "cap_pass",
    "fanout_place",
    "file_name",
    "file_path",
    "flagged",
    "is_temp",
    "key_of",
    "key_of_path",
    "layout_marker",
    "pages",
    "renewed",
    "same_file",
    "scan_adopts",
    "scan_listing",
    "space_pass",
    "stale_temps",
    "total",
]

Entry = tuple[str, int, bool]  # key, size in bytes, in flight


def file_name(key: str, ns: str) -> str:
    """F1: the file of ``key`` in namespace ``ns``: ``<key><ns>.bin``, the key's ``%`` and ``_`` escaped.

    pre: key != "" and not key.startswith(".") and "/" not in key and chr(0) not in key
    pre: ns == "" or ns.startswith("_")
    post: __return__.endswith(ns + ".bin")
    post: key_of(__return__, ns) == key
    """
    return key.replace("%", "%25").replace("_", "%5F") + ns + ".bin"


def key_of(name: str, ns: str) -> str | None:
    """F1: the key whose file is ``name`` in namespace ``ns`` (it starts at the first ``_``), or None.

    pre: ns == "" or ns.startswith("_")
    post: __return__ is None or file_name(__return__, ns) == name
    """
    stem, dot_bin = name[:-4], name[-4:]
    part, mark, rest = stem.partition("_")
    if dot_bin != ".bin" or not part or part[0] == "." or mark + rest != ns:
        return None
    key = "%".join(piece.replace("%5F", "_") for piece in part.split("%25"))
    return key if "/" not in key and "\0" not in key and file_name(key, ns) == name else None


def fanout_place(name: str) -> str:
    """F1-fanout: the two subdirectories of the file ``name`` in the fanout layout, ``<h0>/<h1>``: the
    first and second bytes of the CRC-32 of its encoded name, two lower-case hex digits each.

    post: len(__return__) == 5 and __return__[2] == "/"
    """
    crc = zlib.crc32(os.fsencode(name))
    return f"{crc >> 24:02x}/{crc >> 16 & 0xFF:02x}"


def file_path(key: str, ns: str, layout: str) -> str:
    """F1-fanout: where ``key``'s file lies relative to the directory: its name (``flat``), or two
    subdirectories down (``fanout``).

    pre: key != "" and not key.startswith(".") and "/" not in key and chr(0) not in key
    pre: ns == "" or ns.startswith("_")
    pre: layout in ("flat", "fanout")
    post: key_of_path(__return__, ns, layout) == key
    """
    name = file_name(key, ns)
    return name if layout == "flat" else f"{fanout_place(name)}/{name}"


def key_of_path(path: str, ns: str, layout: str) -> str | None:
    """F1-fanout: the key whose file lies at ``path`` (relative to the directory) in ``layout``, or None:
    in the directory itself (``flat``), or in the two subdirectories its name hashes to (``fanout``).

    pre: ns == "" or ns.startswith("_")
    pre: layout in ("flat", "fanout")
    post: __return__ is None or file_path(__return__, ns, layout) == path
    """
    where, _slash, name = path.rpartition("/")
    if layout == "flat":
        return None if where else key_of(name, ns)
    return key_of(name, ns) if where == fanout_place(name) else None


def layout_marker(ns: str) -> str:
    """F1-fanout: the file a fanout store of namespace ``ns`` keeps in the directory itself (a flat store
    of ``ns`` refuses a directory that has it); never a page's name in any namespace (it does not end in
    ``.bin``) nor a temp file's (F8: start-up never removes it), and it names its own namespace (another
    namespace's marker does not make a flat store of ``ns`` refuse the directory).

    pre: ns == "" or ns.startswith("_")
    pre: "/" not in ns and chr(0) not in ns
    post: "/" not in __return__ and __return__.startswith(".")
    post: not __return__.endswith(".bin") and key_of(__return__, ns) is None
    post: not is_temp(__return__)
    post: __return__[len(".hicache") : -len(".fanout")] == ns
    """
    return f".hicache{ns}.fanout"


def same_file(key: str, ns: str, other_key: str, other_ns: str) -> bool:
    """F1: two stores name the same file only for the same key in the same namespace.

    pre: key != "" and not key.startswith(".") and "/" not in key and chr(0) not in key
    pre: other_key != "" and not other_key.startswith(".")
    pre: "/" not in other_key and chr(0) not in other_key
    pre: ns == "" or ns.startswith("_")
    pre: other_ns == "" or other_ns.startswith("_")
    post: not __return__ or (key == other_key and ns == other_ns)
    """
    return file_name(key, ns) == file_name(other_key, other_ns)


_TEMP = re.compile(r"\.[0-9a-f]{12}\.tmp")


def is_temp(name: str) -> bool:
    """F8, S6: a temp file of the store is named exactly ``.<12 lower-case hex digits>.tmp``."""
    return _TEMP.fullmatch(name) is not None


def pages(
    files: Mapping[str, tuple[bytes, float]], ns: str, layout: str = "flat"
) -> list[tuple[float, str, str, int]]:
    """F8: the pages of namespace ``ns`` in a directory ``path -> (bytes, mtime)`` (paths relative to it),
    oldest first, ties in the listing's order, as ``(mtime, path, key, size)``; F1-fanout: only where
    ``layout`` puts them.  The listing here is the fake filesystem's: each directory by name, a fanout
    store's subdirectories walked in that order too, which is the order of the relative paths."""
    found = ((m, n, key_of_path(n, ns, layout), len(d)) for n, (d, m) in files.items())
    return sorted(((m, n, k, size) for m, n, k, size in found if k is not None), key=lambda p: (p[0], p[1]))


def stale_temps(
    files: Mapping[str, tuple[bytes, float]], now: float, max_age: float, layout: str = "flat"
) -> list[str]:
    """F8: the temp files of a directory ``path -> (bytes, mtime)`` older than ``max_age`` at ``now``: in
    the directory itself, and (``fanout``, F1-fanout) in the subdirectories of the second level."""
    return [
        path
        for path, (_data, mtime) in list(files.items())
        if now - mtime > max_age and _temp_place(path, layout)
    ]


def scan_listing(paths: Iterable[str]) -> list[str]:
    """F8-bg: the nodes a flat store's background scan reads, in the order of the listing that began
    when it was built (the fake filesystem's: by name): those in the directory itself.

    post: __return__ == sorted(__return__)
    post: not any("/" in p for p in __return__)
    """
    return sorted(p for p in paths if "/" not in p)


class Listing:
    """F8, F8-bg: a store's start-up listing as its scan reads it: the directory's files as the listing saw
    them (``files``, path -> (bytes, mtime)), its nodes not read yet, in order (``left``; None once the
    scan has ended), the paths the store removed or found missing since it began (``gone``: such a page
    is not adopted from it) and the filesystem's clock when it began (``now``, the temp-file sweep's).
    (The one stateful helper here: the store's model holds one.)"""

    def __init__(self, files: Mapping[str, tuple[bytes, float]], nodes: list[str] | None, now: float) -> None:
        self.files, self.left, self.now = dict(files), nodes, now
        self.gone: set[str] = set()

    def batch(self, size: int) -> dict[str, tuple[bytes, float]] | None:
        """The files among the next ``size`` nodes (None: the scan had ended); fewer than ``size`` nodes
        left ends it."""
        if self.left is None:
            return None
        batch, rest = self.left[:size], self.left[size:]
        self.left = rest if len(batch) == size else None
        return {n: self.files[n] for n in batch if n in self.files}


def scan_adopts(
    lru: list[Entry], listed: Mapping[str, tuple[bytes, float]], ns: str, layout: str, gone: Set[str]
) -> list[Entry]:
    """F8, F8-bg: the entries a batch of the start-up listing adopts: the pages of ``ns`` in ``listed``
    (path -> (bytes, mtime), as the listing saw them) whose key is not tracked in ``lru`` and whose path is
    not in ``gone`` (removed or found missing by the store since the scan began), oldest first (ties in
    the listing's order); the store puts them before every entry of ``lru``, as the least recently
    used.  (No contract, as :func:`pages` has none: CrossHair cannot build its listing; the machines
    check it.)
    """
    tracked = {e[0] for e in lru}
    found = pages(listed, ns, layout)
    return [(k, size, False) for _m, n, k, size in found if k not in tracked and n not in gone]


def _temp_place(path: str, layout: str) -> bool:
    where, _slash, name = path.rpartition("/")
    if not is_temp(name):
        return False
    return not where or (layout == "fanout" and _FANOUT_PLACE.fullmatch(where) is not None)


_FANOUT_PLACE = re.compile(r"[0-9a-f]{2}/[0-9a-f]{2}")


def total(lru: list[Entry]) -> int:
    """V2, C3: the evictor's total is the sum of the tracked sizes.

    post: __return__ == sum(e[1] for e in lru)
    """
    return sum(size for _key, size, _in_flight in lru)


def renewed(lru: list[Entry], key: str, size: int, in_flight: bool) -> list[Entry]:
    """V4: ``key``'s entry, now ``(key, size, in_flight)``, is the most recently used; the others keep
    their order.

    post: __return__[-1] == (key, size, in_flight)
    post: [e for e in __return__ if e[0] != key] == [e for e in lru if e[0] != key]
    """
    return [e for e in lru if e[0] != key] + [(key, size, in_flight)]


def flagged(lru: list[Entry], key: str, in_flight: bool) -> list[Entry]:
    """V4, C5: ``key``'s entry in flight or not, in its place.

    post: [e[:2] for e in __return__] == [e[:2] for e in lru]
    post: all(e[2] == (in_flight if e[0] == key else old[2]) for e, old in zip(__return__, lru))
    """
    return [(k, s, in_flight if k == key else f) for k, s, f in lru]


def _evictable(entry: Entry, keep: str | None, resting: frozenset[str]) -> bool:
    return not entry[2] and entry[0] != keep and entry[0] not in resting


def cap_pass(
    lru: list[Entry],
    keep: str | None,
    size: int,
    cap: int,
    ratio: float,
    unremovable: frozenset[str],
    resting: frozenset[str] = frozenset(),
) -> tuple[list[Entry], list[str]]:
    """V3, V5: evict LRU entries until the others fit under floor(cap * ratio) - size.

    Returns the entries left and the victims tried, in order (each one got
    ``on_evict``, V6).  ``keep`` (the key being written), writes in flight and
    resting keys (S7) are never victims; an unremovable victim is tried once
    and keeps its entry.

    pre: 0 < cap < 2**52 and 0 < ratio <= 1 and size >= 0
    pre: all(e[1] >= 0 for e in lru) and len({e[0] for e in lru}) == len(lru)
    post: all(e in lru for e in __return__[0])
    post: not any(e[2] or e[0] == keep or e[0] in resting for e in lru if e[0] in __return__[1])
    post: all(e in __return__[0] for e in lru if e[0] in unremovable or e[2])
    post: len(__return__[0]) + len([k for k in __return__[1] if k not in unremovable]) == len(lru)
    """
    others = total(lru) - sum(e[1] for e in lru if e[0] == keep)
    target = math.floor(cap * ratio) - size
    left: list[Entry] = []
    tried: list[str] = []
    for entry in lru:
        if others > target and _evictable(entry, keep, resting):
            tried.append(entry[0])
            if entry[0] not in unremovable:
                others -= entry[1]
                continue
        left.append(entry)
    return left, tried


def space_pass(
    lru: list[Entry],
    keep: str | None,
    size: int,
    floor: int,
    free: int,
    unremovable: frozenset[str],
    resting: frozenset[str] = frozenset(),
) -> tuple[list[Entry], list[str]]:
    """V3, V5: evict LRU entries until the estimated free space minus size reaches the floor.

    The estimate grows by each victim's size (the caller re-probes the real
    free space afterwards).  Same victims rules as :func:`cap_pass`.

    pre: floor > 0 and size >= 0
    pre: all(e[1] >= 0 for e in lru) and len({e[0] for e in lru}) == len(lru)
    post: all(e in lru for e in __return__[0])
    post: not any(e[2] or e[0] == keep or e[0] in resting for e in lru if e[0] in __return__[1])
    post: all(e in __return__[0] for e in lru if e[0] in unremovable or e[2])
    """
    left: list[Entry] = []
    tried: list[str] = []
    for entry in lru:
        if free - size < floor and _evictable(entry, keep, resting):
            tried.append(entry[0])
            if entry[0] not in unremovable:
                free += entry[1]
                continue
        left.append(entry)
    return left, tried
