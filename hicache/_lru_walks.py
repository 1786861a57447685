"""The LRU walks and chain arguments both existence caches share (docs/SEMANTICS.md E2-E8, P2-P4).

:mod:`hicache.existence_cache` (one global LRU, E) and :mod:`hicache.pool_beliefs` (one LRU per pool, P)
keep their beliefs in an ``OrderedDict`` of key -> ``None``, least recently used first, and walk a chain
of pages over it the same way; the walks live here once.  They are the hot paths, so every per-page step
runs inside C: ``any(map(beliefs.move_to_end, keys))`` touches the keys in order and raises ``KeyError``
at the first one not believed, after the ones before it were touched: exactly E4.

Complexity: every function is O(keys walked), plus O(1) per evicted belief (``believe``).  Thread model:
none of its own; the callers are not thread-safe by design (one caller thread at deterministic points).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable, Container, Hashable, Iterable, Iterator, Sequence
from itertools import repeat
from typing import Any

__all__ = [
    "as_chain",
    "believe",
    "check_pool",
    "check_sequence",
    "forget",
    "touch_all",
    "touch_all_or_covered",
]

Beliefs = OrderedDict[Hashable, None]

_exhaust: Callable[[Iterable[object]], None] = deque[object](maxlen=0).extend  # runs an iterator, in C


def believe(beliefs: Beliefs, keys: Sequence[Hashable], max_entries: int) -> None:
    """E2 on the key level: each key in order becomes most recently used, then trim to ``max_entries``."""
    before = len(beliefs)
    # A plain loop: ``update(zip(...))`` allocates a pair per key and ran more instructions (cachegrind).
    for key in keys:
        beliefs[key] = None  # appends a new key; a known key keeps its place (fixed just below)
    if len(beliefs) - before != len(keys):
        # Some key was known or repeated: move every key to the end, in order, so each ends at
        # its last occurrence.  (All new and distinct, the common write-through case, needs no move.)
        any(map(beliefs.move_to_end, keys))
    excess = len(beliefs) - max_entries
    if excess > 0:
        # popitem(last=False) reads the hash stored in the node: no visit to the evicted key's object.
        _exhaust(map(beliefs.popitem, repeat(False, excess)))


def touch_all(beliefs: Beliefs, keys: Iterable[Hashable]) -> bool:
    """E4: True if every key is believed; the keys are touched in order up to the first miss."""
    try:
        any(map(beliefs.move_to_end, keys))
    except KeyError:  # move_to_end: the first key not believed; the ones before it are touched
        return False
    return True


def touch_all_or_covered(
    beliefs: Beliefs,
    chain: Sequence[Hashable],
    covered: Container[Hashable],
    keys_of: Callable[[Iterator[Hashable]], Iterable[Hashable]] | None = None,
) -> bool:
    """Tell whether every page of ``chain`` is believed or in ``covered`` (E5, P4).

    Only believed pages are touched, in order, up to the first page that is neither.

    ``keys_of(pages)`` turns an iterator of pages into their dict keys lazily (None: a page is its key).
    The walk restarts after each covered page; the page that missed is found from the remaining length
    of the chain's iterator (``__length_hint__``, exact for a list or tuple iterator).
    """
    pages: Iterator[Hashable] = iter(chain)
    touch = map(beliefs.move_to_end, pages if keys_of is None else keys_of(pages))
    last = len(chain) - 1
    while True:
        try:
            any(touch)
        except KeyError:
            if chain[last - pages.__length_hint__()] in covered:  # type: ignore[attr-defined]
                continue  # covered (an acknowledged copy, a write in flight): neither added nor touched
            return False
        return True


def forget(beliefs: Beliefs, keys: Iterable[Hashable]) -> None:
    """E6: drop the belief of each key; a key not believed is no error."""
    _exhaust(map(beliefs.pop, keys, repeat(None)))


def as_chain(name: str, hashes: Iterable[Hashable]) -> list[Hashable] | tuple[Hashable, ...]:
    """``hashes`` as a list or tuple; a one-shot iterator is read once (E8).

    Materializing first also keeps a ``KeyError`` raised by the caller's own
    generator from being mistaken for "page not believed".
    """
    if type(hashes) is list or type(hashes) is tuple:
        return hashes
    try:
        return list(hashes)
    except TypeError:
        if not isinstance(hashes, Iterable):
            raise TypeError(
                f"{name} must be an iterable of page hashes, got {type(hashes).__name__} {hashes!r}"
            ) from None
        raise


def check_sequence(name: str, hashes: Any) -> Sequence[Hashable]:
    """``hashes`` if it is a sequence (``invalidate_beyond`` slices it, E6/E8)."""
    if not isinstance(hashes, Sequence):
        raise TypeError(f"{name} must be a sequence of page hashes, got {type(hashes).__name__} {hashes!r}")
    return hashes


def check_pool(pool: Any, name: str = "pool") -> Hashable:
    """``pool`` if it is hashable (it names a key space); the TypeError names it as ``name`` (B1)."""
    try:
        hash(pool)
    except TypeError:
        raise TypeError(f"{name} must be hashable, got {type(pool).__name__} {pool!r}") from None
    return pool  # type: ignore[no-any-return]
