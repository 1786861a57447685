"""The clause catalogue of ``docs/SEMANTICS.md``: every behaviour the project promises, by ID.

The conformance report lists every clause here, whether or not a check names it,
so that a clause nothing checks shows up as UNCHECKED instead of disappearing.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["CLAUSES", "CLAUSE_ID", "CLAUSE_IDS", "COMPONENT_OF_LETTER", "Clause"]

# A clause ID in text: how a check names a clause (an assertion's "E4: ..." prefix; a CrossHair
# contract's docstring, which its test turns into a ``clauses`` marker).
# A declared variant's suffix (M6-lru, V3-bg) is part of its ID.
CLAUSE_ID = re.compile(r"\b([MEPFVCBS][1-9][0-9]?(?:-lru|-bg|-fanout)?)\b")


class Clause(NamedTuple):
    id: str
    component: str
    title: str


COMPONENT_OF_LETTER: dict[str, str] = {
    "M": "MetadataCache",
    "E": "StorageExistenceCache",
    "P": "PooledExistenceCache / PoolExistenceBeliefs",
    "F": "HiCacheFile",
    "V": "LRUFileEvictor",
    "C": "File store consistency",
    "B": "Bad input",
    "S": "File store on a shared directory",
    "O": "Regression oracle",
}

_TITLES: dict[str, str] = {
    "M1": "constructor: ttl -1 or finite >= 0, max_entries None or int >= 1, clock read once",
    "M2": "live iff ttl == -1 or now - birth <= ttl (inclusive boundary)",
    "M3": "add: no-op on a live key; new lifetime when not live",
    "M4": "contains is True exactly when live; purging unobservable",
    "M5": "remove / clear / len (live keys)",
    "M6": "bound drops expired then oldest birth; amortized O(1) reclaim",
    "M6-lru": "declared variant of M6: a hit makes the key most recent; the bound drops expired then LRU",
    "M7": "every public method linearizable under threads",
    "M8": "optional counters: hits, misses, expirations, evictions",
    "M9": "batches: add_many / contains_many / remove_many / contains_prefix at one instant, one lock",
    "E1": "constructor: max_entries int >= 0; ordered set of beliefs",
    "E2": "add: each hash becomes MRU in order, then trim LRU to the bound",
    "E3": "contains touches a believed page",
    "E4": "contains_all walks, touches, stops at first miss",
    "E5": "covers_all: extra_cover pages count but are not touched or added",
    "E6": "invalidate_beyond drops hashes[keep_pages:]; negative is ValueError",
    "E7": "clear / len",
    "E8": "hashes may be any iterable, one-shot generators included",
    "P1": "registry: one PoolExistenceBeliefs per pool name; clear/clear_inflight on all",
    "P2": "per-pool add/contains/contains_all/invalidate_beyond as E, own bound",
    "P3": "track/untrack in-flight: one reference per occurrence",
    "P4": "covered: believed or in flight; only believed pages touched",
    "P5": "clear drops beliefs and refs; clear_inflight only refs",
    "F1": "one file per key, namespace suffix, .bin; namespaces isolated",
    "F2": "key and value validation before any I/O",
    "F3": "set: skip existing, evictor admits, temp + atomic rename, failures are False",
    "F4": "get / get_into: hits refresh, misses refund capacity, exact-size get_into",
    "F5": "batch_set / batch_get / batch_exists prefix; no directory scan",
    "F6": "exists: live belief is answered with no filesystem call",
    "F7": "clear removes only this namespace; delete removes one key",
    "F8": "start-up scan seeds evictor and beliefs; stale temp files removed",
    "F9": "configuration precedence, env aliases, invalid values are ValueError",
    "F10": "the engine backend: a dynamic HiCacheStorage, engine file names, tensors as raw bytes, no raise",
    "F8-bg": "declared variant of F8: the constructor returns as the listing begins; a thread adopts batches",
    "F1-fanout": "layout flat or fanout (two levels of 256 subdirectories); a mismatch is refused",
    "V1": "evictor on iff max_size > 0 or min_free_space > 0",
    "V2": "tracks size, LRU order, total, in-flight writes",
    "V3": "reserve: evict to the ratio floor; refuse if still over",
    "V3-bg": "declared variant of V3: writes never evict; each background pass drains to the low watermark",
    "V4": "commit / abort / touch",
    "V5": "never evicts in flight; unremovable files skipped, no wedging",
    "V6": "on_evict called once per victim, before unlink; never on abort/clear",
    "C1": "no self-inflicted stale positives, even racing an eviction",
    "C2": "bounded staleness for other processes' deletions",
    "C3": "accounting: total equals tracked sizes equals bytes on disk",
    "C4": "crash consistency: whole values only, temp files cleaned",
    "C5": "store operations linearizable under threads",
    "C6": "one store per namespace: an advisory lock file, a warning when another live store holds it",
    "B1": "wrong types TypeError, wrong values ValueError, naming the parameter",
    "B2": "I/O failure is an answer plus a log line; invariants intact",
    "S1": "directory resolved once, refused unless ours and not writable by others; created 0700/2770",
    "S2": "page and temp files 0600/0660 whatever the umask, O_EXCL | O_NOFOLLOW",
    "S3": "only regular files of ours are pages; others never read, believed, adopted or counted",
    "S4": "get reads at most the opened file's size; larger than max_value_size refused before allocating",
    "S5": "keys encode strictly (round-trip); a batch checks every key before its first I/O",
    "S6": "start-up removes only old temp files of the exact pattern that this user owns; EEXIST re-draws",
    "S7": "a set at the cap costs O(victims + skipped); an unremovable file rests 30 s, logged once",
    "S8": "max_size clamped to the filesystem's capacity; ENOSPC on a write evicts, then retries once",
    "O1": "inert observation: every call on the target is a printed step; state only through snapshot()",
    "O2": "every failing clause in one run, each with its own counterexample; then passed, left out",
    "O3": "declared choices: the spec follows the declared eviction order; the report prints it",
    "O4": "honest control of the clock and the disk: injected, patched or interposed, counted, else exit 2",
    "O5": "exit 0 PASS, 1 FAIL, 2 usage; a refused constructor argument is a FAIL, a signature exit 2",
    "O6": "--threads N: real threads, overlap forced at the clock and filesystem; UNKNOWN is exit 3",
    "O7": "--trace FILE: a hicache-trace/1 history is timed-linearizable against the spec; malformed exit 2",
    "O8": "honest coverage: passed only when its checks ran to their budget; set aside is not checked",
    "O9": "a recorder wraps any Python object and writes hicache-trace/1 under real traffic, cheaply",
    "O10": "one probe of the target: every mode builds and calls it only from what the probe found",
    "O11": "blame by provenance: without snapshot(), the rule that made the state the answer read first",
    "O12": "the engine's form: (storage_config, file_path) stores behind a shim; what it lacks is listed",
}

CLAUSES: tuple[Clause, ...] = tuple(
    Clause(cid, COMPONENT_OF_LETTER[cid[0]], title) for cid, title in _TITLES.items()
)
CLAUSE_IDS: frozenset[str] = frozenset(_TITLES)  # every clause ID of docs/SEMANTICS.md
