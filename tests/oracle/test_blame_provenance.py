"""Blame by provenance (O11, issue 30): without a ``snapshot()``, the clause blamed first is that of the rule
that made the state the diverging answer reads, when the counterexample is consistent with that rule in its
known wrong form; the clause of the operation that answered comes next.

The targets are written here as users write them (not taken from the catalogue): the seed's
``MetadataCache`` shape (``add`` keeps an expired entry's birth, ``contains`` purges lazily), the engine
release's own ``MetadataCache`` from its wheel, an LRU existence cache whose ``contains`` does not refresh,
and, for the negative, a cache whose ``contains`` answers True for a key never added (no wrong form of a
rule explains that: the answering operation's clause is blamed).  A trace of a cache that keeps the old
birth is blamed on M3 too.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from spec.oracle import check
from spec.oracle._provenance import made_by
from spec.oracle._run import prepared
from spec.oracle._session import Call, Recording, replay
from spec.oracle._trace import check_trace
from tests.oracle._user_caches import SeedShapedCache

STEPS = 15
EXAMPLES = 100  # a cap: each search below stops at its first failure, found within it at its seed


class AbsentKeyIsLive(SeedShapedCache):
    """A new life on every re-add after expiry (M3 holds), but an absent key's birth defaults to now, so
    ``contains`` answers True for a key never added: wrong in a way no rule's wrong form explains."""

    def add(self, key: Hashable) -> None:
        with self.lock:
            now = time.monotonic()
            birth = self.cache.get(key)
            if birth is None or (self.ttl_seconds != -1 and now - birth > self.ttl_seconds):
                self.cache[key] = now

    def contains(self, key: Hashable) -> bool:
        with self.lock:
            now = time.monotonic()
            return self.ttl_seconds == -1 or now - self.cache.get(key, now) <= self.ttl_seconds


class NoRefreshLRU:
    """An LRU of ``(pool, hash)`` beliefs whose ``contains`` answers without refreshing the belief (E3's
    mistake); ``add`` and ``contains_all`` are right.  No snapshot."""

    def __init__(self, max_entries: int = 512 * 1024) -> None:
        self.max_entries = max_entries
        self.beliefs: OrderedDict[tuple[Hashable, Hashable], None] = OrderedDict()

    def add(self, pool: Hashable, hashes: Iterable[Hashable]) -> None:
        for h in hashes:
            self.beliefs[(pool, h)] = None
            self.beliefs.move_to_end((pool, h))
        while len(self.beliefs) > self.max_entries:
            self.beliefs.popitem(last=False)

    def contains(self, pool: Hashable, page_hash: Hashable) -> bool:
        return (pool, page_hash) in self.beliefs

    def contains_all(self, pool: Hashable, hashes: Iterable[Hashable]) -> bool:
        for h in hashes:
            if (pool, h) not in self.beliefs:
                return False
            self.beliefs.move_to_end((pool, h))
        return True


def _first(component: str, target: Any, seed: int = 0) -> Any:
    """The first failure of a search that stops there; B1 left out (these caches do not validate input,
    by design, O2)."""
    result = check(
        component, target, seed=seed, max_examples=EXAMPLES, steps=STEPS, every_clause=False, leave_out=["B1"]
    )
    assert result.verdict == "FAIL", result.summary()
    return result, result.failures[0]


@pytest.mark.slow("an oracle search; make test blames the same cache on M3 first through --threads")
@pytest.mark.clauses("O11", "M3", "M4")
def test_the_seed_shaped_cache_is_blamed_on_m3_first_with_its_contains_next() -> None:
    result, first = _first("metadata-cache", SeedShapedCache)
    assert first.clauses[0] == "M3" and first.provenance == ["M3"], result.summary()
    assert first.inferred and "M4" in first.clauses[1:], result.summary()
    assert "M3" not in first.consistent_with and "M3" not in result.passed_clauses
    assert 1 <= first.calls <= 4, result.summary()
    assert first.counterexample[-1].startswith("cache.contains("), first.counterexample
    assert [line.split("(")[0] for line in first.counterexample].count("cache.add") >= 2  # the re-add
    assert "inferred without snapshot(), from the rule that made the state" in result.summary()


@pytest.mark.slow("an oracle search on the engine release's MetadataCache (loads torch and the wheel)")
@pytest.mark.clauses("O11", "M3", "O4")
def test_the_engine_releases_metadata_cache_is_blamed_on_m3_first(engine_storage: ModuleType) -> None:
    """The release's ``MetadataCache`` reads ``time.monotonic`` through its module, which the oracle
    patches (O4); it keeps an expired entry's birth on a re-add (M3)."""
    result, first = _first("metadata-cache", engine_storage.MetadataCache)
    assert "hicache_storage" in result.time_control, result.time_control
    assert first.clauses[0] == "M3" and first.provenance == ["M3"], result.summary()
    assert first.inferred and "M4" in first.clauses[1:], result.summary()
    assert 1 <= first.calls <= 4, result.summary()


@pytest.mark.clauses("O11", "M4")
def test_a_divergence_no_wrong_form_explains_is_blamed_on_the_operation_that_answered() -> None:
    result, first = _first("metadata-cache", AbsentKeyIsLive)
    assert first.inferred and first.provenance == [], result.summary()
    assert first.clauses[0] == "M4", result.summary()
    assert "M3" in first.consistent_with or first.calls == 1, result.summary()  # an add in it: M3 fits
    assert "from the rule that made the state" not in result.summary()


def _existence_replay(last: Call) -> tuple[list[str], Any]:
    """Two beliefs in a cache of two, a hit on the older, a third page added, then ``last``: replayed on
    the no-refresh cache (it evicts the page it was asked about, the spec the other), with the clauses
    whose rule's wrong form gives every answer."""
    calls = [
        Call((), "add", (("pool", "p"), ("hashes", ("a", "b"))), None),
        Call((), "contains", (("pool", "p"), ("page_hash", "a")), None),
        Call((), "add", (("pool", "p"), ("hashes", ("c",))), None),
        last,
    ]
    with prepared("existence-cache", NoRefreshLRU, leave_out=["B1"]) as run:
        recording = Recording({"max_entries": 2}, None, calls)
        replayed = replay(run.session, recording, calls)
        assert replayed.divergence == 3, replayed
        return made_by(run.session, recording, replayed), replayed


@pytest.mark.clauses("O11", "E3", "E4")
@pytest.mark.parametrize(
    "last",
    [
        pytest.param(Call((), "contains_all", (("pool", "p"), ("hashes", ("a",))), None), id="contains_all"),
        pytest.param(Call((), "contains", (("pool", "p"), ("page_hash", "b")), None), id="contains"),
    ],
)
def test_a_contains_that_does_not_refresh_is_e3s_whichever_call_answered(last: Call) -> None:
    made, replayed = _existence_replay(last)
    assert made == ["E3"], (made, replayed)


@pytest.mark.clauses("O11", "E3", "E4")
def test_the_no_refresh_existence_cache_is_blamed_on_e3_first_in_a_search() -> None:
    result, first = _first("existence-cache", NoRefreshLRU, seed=1)
    assert first.clauses[0] == "E3" and first.provenance == ["E3"], result.summary()
    answered = first.counterexample[-1].split("(", 1)[0].removeprefix("cache.")
    own = {"contains": "E3", "contains_all": "E4"}
    assert own[answered] in first.clauses, result.summary()  # the answering operation's clause too
    assert first.inferred, result.summary()


METADATA = {"format": "hicache-trace/1", "component": "metadata-cache", "config": {"ttl_seconds": 1.0}}


def _trace(tmp_path: Path, header: dict[str, Any], *calls: tuple[Any, ...]) -> str:
    """A trace file: the header, then one call per (op, args, invoke, return, result)."""
    lines = [json.dumps(header)]
    for op, args, invoke, ret, result in calls:
        call = {"thread": 1, "op": op, "args": args, "invoke": invoke, "return": ret, "result": result}
        lines.append(json.dumps(call))
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.clauses("O11", "O7", "M3")
def test_a_trace_of_a_cache_that_keeps_the_old_birth_is_blamed_on_m3_with_the_first_add_shown(
    tmp_path: Path,
) -> None:
    path = _trace(
        tmp_path,
        METADATA,
        ("add", ["k"], 10.0, 10.01, None),
        ("contains", ["k"], 10.5, 10.51, True),
        ("add", ["k"], 12.0, 12.01, None),  # expired since 11.01 at the latest: a new life, born here
        ("contains", ["k"], 12.5, 12.51, False),  # the old birth kept: expired
    )
    result = check_trace("metadata-cache", path)
    assert result.verdict == "FAIL", result.summary()
    [first] = result.failures
    assert first.clauses[:2] == ["M3", "M4"] and first.provenance == ["M3"], result.summary()
    assert first.inferred and result.message.startswith("M3: "), result.message
    # The first add made the state (its birth): it is printed, though "add, then a miss" alone fails too.
    assert [line.split(":")[0] for line in first.counterexample] == ["line 2", "line 4", "line 5"]
    again = tmp_path / "again.jsonl"
    again.write_text(first.repro)  # the lines printed, as a trace, fail the same way
    assert check_trace("metadata-cache", str(again)).failures[0].clauses[0] == "M3"


@pytest.mark.clauses("O11", "O7", "M4")
def test_a_trace_whose_miss_no_wrong_form_explains_is_blamed_on_the_answer(tmp_path: Path) -> None:
    path = _trace(
        tmp_path,
        METADATA,
        ("add", ["k"], 10.0, 10.01, None),
        ("contains", ["k"], 10.5, 10.51, False),  # alive: no re-add made this state
    )
    result = check_trace("metadata-cache", path)
    first = result.failures[0]
    assert first.clauses[0] == "M4" and first.provenance == [] and not first.inferred, result.summary()


@pytest.mark.clauses("O11", "O7", "E3", "E4")
def test_a_trace_of_an_existence_cache_whose_contains_does_not_refresh_is_blamed_on_e3(
    tmp_path: Path,
) -> None:
    header = {"format": "hicache-trace/1", "component": "existence-cache", "config": {"max_entries": 2}}
    path = _trace(
        tmp_path,
        header,
        ("add", ["p", ["a", "b"]], 1.0, 1.1, None),
        ("contains", ["p", "a"], 2.0, 2.1, True),
        ("add", ["p", ["c"]], 3.0, 3.1, None),
        ("contains_all", ["p", ["b"]], 4.0, 4.1, True),  # the spec evicted b (a was refreshed)
    )
    result = check_trace("existence-cache", path)
    first = result.failures[0]
    assert first.clauses[:2] == ["E3", "E4"] and first.provenance == ["E3"], result.summary()
