"""``--threads N`` (O6): real threads held at the oracle's clock and filesystem, histories checked.

The catalogue's concurrent variants (``spec.variants.metadata_cache.CONCURRENT``,
``spec.variants.file_store.CONCURRENT``) are each correct one call at a time and
must FAIL under ``--threads 4`` at the default budget, naming M7 (C5; M9 and M7
for a torn batch); the correct alternatives and the project's own classes must
PASS, in both eviction orders (M6 and M6-lru, declared).  The schedule is made
by the oracle's scheduler from the seed, not by the machine's speed.

``make test`` runs one threads test (the store's C5 and the replay of its reproduction) and the
usage errors; the rest (the catalogue, the picture, UNKNOWN, a spin, a deadlock) runs in the verify tier.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from hicache.file_store import HiCacheFile
from hicache.metadata_cache import MetadataCache
from spec.oracle import OracleUsageError, check, check_threads, replay_threads
from spec.oracle.__main__ import main
from spec.variants import file_store as store_variants
from spec.variants import metadata_cache as cache_variants

pytestmark = pytest.mark.threads

EVICTIONS = ("birth", "lru")


def _in_order(klass: Callable[..., Any], eviction: str) -> Callable[..., Any]:
    """The class building caches that evict in ``eviction`` order (its default is birth)."""
    if eviction == "birth":
        return klass
    return functools.partial(klass, eviction="lru")


@pytest.mark.clauses("O6", "C5")
def test_a_store_that_unlinks_outside_its_guard_fails_c5_with_a_replayable_schedule() -> None:
    # Seed 4: its schedule catches it in 2 s (seed 0, the CLI's default, in about 7 s: finding and
    # shortening a longer history); the verify tier runs the default seed over the whole catalogue.
    result = check_threads("file-store", store_variants.UnlinksOutsideItsGuard, threads=4, seed=4)
    assert result.verdict == "FAIL", result.summary()
    assert result.clauses == ["C5"], result.summary()
    assert any(line.startswith("thread ") for line in result.counterexample)
    assert "<- no order explains it" in "\n".join(result.counterexample)
    # The reproduction's schedule brings the same failure back, and the project's store passes it.
    namespace: dict[str, Any] = {}
    exec(compile(result.repro.split("def test_")[0], "repro", "exec"), namespace)  # SCRIPTS, SCHEDULE
    failure = replay_threads(
        "file-store",
        "spec.variants.file_store:UnlinksOutsideItsGuard",
        config={"cap": 6},
        scripts=namespace["SCRIPTS"],
        schedule=namespace["SCHEDULE"],
    )
    assert failure is not None and failure.startswith("C5:"), failure
    assert "schedule=SCHEDULE" in result.repro and "replay_threads(" in result.repro


@pytest.mark.verify_tier
@pytest.mark.clauses("O6", "C5")
def test_picture_of_a_failing_threads_history_has_one_bar_per_call_in_its_lane(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    picture = tmp_path / "race.svg"
    target = "spec.variants.file_store:UnlinksOutsideItsGuard"
    assert main(["file-store", target, "--threads", "4", "--picture", str(picture), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    lanes: dict[str, list[bool]] = {}  # the report's history: thread -> whether each call is unexplained
    for line in report["counterexample"]:
        if line.startswith("thread "):
            thread = line.split()[1].rstrip(":")
            lanes[thread] = []
        else:
            lanes[thread].append(line.endswith("<- no order explains it"))
    svg = ElementTree.parse(picture).getroot()
    ns = {"svg": "http://www.w3.org/2000/svg"}
    drawn = {
        lane.get("data-thread"): [
            "unexplained" in (bar.get("class") or "") for bar in lane.iterfind("svg:rect", ns)
        ]
        for lane in svg.iterfind("svg:g", ns)
    }
    assert drawn == lanes and any(red for reds in drawn.values() for red in reds), (drawn, lanes)
    for lane in svg.iterfind("svg:g", ns):  # each bar in its own thread's lane
        assert {bar.get("data-thread") for bar in lane.iterfind("svg:rect", ns)} == {lane.get("data-thread")}


@pytest.mark.verify_tier
@pytest.mark.clauses("O6", "M7")
def test_an_exception_escaping_a_call_under_threads_is_m7_with_its_traceback() -> None:
    result = check_threads("metadata-cache", cache_variants.UnlockedLen, threads=4)
    assert result.verdict == "FAIL" and result.clauses == ["M7"], result.summary()
    assert "RuntimeError" in result.message and "Traceback" in result.message, result.message


@pytest.mark.verify_tier
@pytest.mark.clauses("O6")
def test_an_exhausted_search_is_unknown_with_exit_3_never_pass(capsys: pytest.CaptureFixture[str]) -> None:
    result = check_threads("metadata-cache", MetadataCache, threads=2, histories=3, max_steps=1)
    assert result.verdict == "UNKNOWN" and not result.passed, result.summary()
    assert "exhausted" in result.message
    argv = ["metadata-cache", "hicache.metadata_cache:MetadataCache", "--threads", "2", "--histories", "2"]
    assert main([*argv, "--max-steps", "1", "--json"]) == 3, capsys.readouterr()
    assert '"verdict": "UNKNOWN"' in capsys.readouterr().out


@pytest.mark.clauses("O6")
@pytest.mark.parametrize(
    ("component", "threads", "expected"),
    [("existence-cache", 4, "from one thread by design"), ("metadata-cache", 1, ">= 2")],
)
def test_threads_outside_their_components_are_usage_errors(
    component: str, threads: int, expected: str
) -> None:
    with pytest.raises(OracleUsageError, match=expected):
        check_threads(component, MetadataCache, threads=threads)


# -- the catalogue, at the default budget (verify tier) -------------------------------------------------


@pytest.mark.verify_tier
@pytest.mark.clauses("O6", "M7", "M9", "M6-lru")
@pytest.mark.parametrize("eviction", EVICTIONS)
@pytest.mark.parametrize("name", sorted(cache_variants.CONCURRENT))
def test_every_wrong_concurrent_metadata_cache_fails_naming_its_clause(name: str, eviction: str) -> None:
    klass, clause = cache_variants.CONCURRENT[name]
    result = check_threads(
        "metadata-cache", _in_order(klass, eviction), threads=4, declare={"eviction": eviction}
    )
    assert result.verdict == "FAIL", result.summary()
    assert clause in result.clauses and "M7" in result.clauses, result.summary()


@pytest.mark.verify_tier
@pytest.mark.clauses("O6", "M7", "M9", "M6-lru")
@pytest.mark.parametrize("eviction", EVICTIONS)
@pytest.mark.parametrize("name", sorted(cache_variants.CONCURRENT_CORRECT))
def test_every_correct_metadata_cache_passes_under_threads(name: str, eviction: str) -> None:
    klass = cache_variants.CONCURRENT_CORRECT[name]
    result = check_threads(
        "metadata-cache", _in_order(klass, eviction), threads=4, declare={"eviction": eviction}
    )
    assert result.verdict == "PASS", result.summary()
    assert result.passed_clauses == ["M7", "M9"]


@pytest.mark.verify_tier
@pytest.mark.clauses("O6", "C5")
@pytest.mark.parametrize("name", sorted(store_variants.CONCURRENT))
def test_every_wrong_concurrent_store_fails_c5(name: str) -> None:
    factory, clause = store_variants.CONCURRENT[name]
    result = check_threads("file-store", factory, threads=4)
    assert result.verdict == "FAIL" and clause in result.clauses, result.summary()


@pytest.mark.verify_tier
@pytest.mark.clauses("O6", "C5")
def test_the_projects_store_passes_under_threads() -> None:
    result = check_threads("file-store", HiCacheFile, threads=4)
    assert result.verdict == "PASS", result.summary()
    assert result.passed_clauses == ["C5"]


@pytest.mark.verify_tier
@pytest.mark.clauses("O6", "M3", "M7")
def test_a_class_wrong_one_call_at_a_time_keeps_its_sequential_clause_under_threads() -> None:
    result = check_threads("metadata-cache", cache_variants.KeepsStaleBirth, threads=4)
    assert result.verdict == "FAIL", result.summary()
    assert "M3" in result.clauses and "M7" not in result.clauses, result.summary()


class SpinsWhenFull(MetadataCache):
    """A cache whose ``add`` spins once it is full (waiting for room nobody makes)."""

    def add(self, key: Any) -> None:
        while self._max_entries is not None and len(self) >= self._max_entries and not self.contains(key):
            pass
        super().add(key)


@pytest.mark.verify_tier
@pytest.mark.clauses("O6", "M7")
def test_a_spinning_call_under_threads_ends_in_a_fail_with_stacks() -> None:
    result = check_threads("metadata-cache", SpinsWhenFull, threads=4, call_timeout=2.0)
    assert result.verdict == "FAIL" and result.clauses == ["M7"], result.summary()
    assert "did not return within 2.0 s" in result.message and "thread 0:" in result.message
    assert "SpinsWhenFull.add" in result.message or "in add" in result.message, result.message


@pytest.mark.verify_tier
@pytest.mark.clauses("O6", "M7")
def test_a_deadlock_under_threads_ends_in_a_fail_naming_the_calls_in_flight() -> None:
    result = check_threads("metadata-cache", cache_variants.OppositeLockOrder, threads=4, call_timeout=2.0)
    assert result.verdict == "FAIL" and result.clauses == ["M7"], result.summary()
    assert "calls in flight" in result.message and "(never returned)" in "\n".join(result.counterexample)


@pytest.mark.verify_tier
@pytest.mark.clauses("O6", "M7", "C5")
@pytest.mark.parametrize(
    ("component", "name"),
    [("metadata-cache", n) for n in sorted(cache_variants.CONCURRENT)]
    + [("file-store", n) for n in sorted(store_variants.CONCURRENT)],
)
def test_every_wrong_concurrent_variant_passes_one_call_at_a_time(component: str, name: str) -> None:
    """Their mistakes are races: the sequential oracle passes each, so M7 (C5) is the right blame.

    150 examples, not the default 500: a mistake one call at a time in classes this small shows in the
    first examples, and the blame under threads rests on the sequential replay of the failing history
    (``test_a_class_wrong_one_call_at_a_time_keeps_its_sequential_clause_under_threads``)."""
    registry = cache_variants.CONCURRENT if component == "metadata-cache" else store_variants.CONCURRENT
    result = check(component, registry[name][0], max_examples=150)
    assert result.verdict == "PASS", result.summary()


@pytest.mark.verify_tier
@pytest.mark.clauses("O6", "M2", "M3", "M4", "M5", "M6", "M9")
@pytest.mark.parametrize("name", ["LockFreeRead", "StripedMetadataCache"])
def test_the_correct_concurrent_alternatives_pass_one_call_at_a_time(name: str) -> None:
    result = check("metadata-cache", cache_variants.CONCURRENT_CORRECT[name])
    assert result.verdict == "PASS", result.summary()


_IMPORT_TIME_LOCK = threading.Lock()  # made before any run: the oracle cannot make it its own


class LockedAtImport(MetadataCache):
    """Correct: every call under a lock made at import, which blocks for real under the oracle's threads
    (the scheduler sees the blocked workers from their frames)."""

    def add(self, key: Any) -> None:
        with _IMPORT_TIME_LOCK:
            super().add(key)

    def contains(self, key: Any) -> bool:
        with _IMPORT_TIME_LOCK:
            now = self._clock()  # a point, held with the lock taken
            birth = self._births.get(key)
            return birth is not None and (self._ttl < 0 or now - birth <= self._ttl)


@pytest.mark.verify_tier
@pytest.mark.clauses("O6", "M7")
def test_a_lock_the_oracle_did_not_make_blocks_for_real_and_never_hangs_a_correct_class() -> None:
    result = check_threads("metadata-cache", LockedAtImport, threads=4, histories=200)
    assert result.verdict == "PASS", result.summary()
