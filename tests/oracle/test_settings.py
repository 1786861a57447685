"""``--settings``: the file store's configuration pinned for a run (issue 31 part 3), and the engine form
under ``--threads``.

The engine release's ``HiCacheFile`` is loaded from its wheel, unmodified (``benchmarks.engine_wheel``); the
tests that need it skip, saying why, without torch or the wheel.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from hicache import HiCacheFile
from spec.oracle import check, machine_for
from spec.oracle.__main__ import main
from spec.oracle._settings import DEFAULTS

CAP_AND_METADATA = {"max_size": 10, "eviction_ratio": 1.0, "enable_metadata_cache": True, "metadata_ttl": 5}


@pytest.fixture(scope="module")
def engine() -> Iterator[ModuleType]:
    """The engine's ``sglang.srt.mem_cache.hicache_storage`` from the release wheel (skipped without it)."""
    from benchmarks import engine_wheel

    loaded = "sglang.srt.mem_cache.hicache_storage" in sys.modules  # by another module's fixture: theirs
    try:
        module = engine_wheel.load_engine_storage()
    except (ImportError, engine_wheel.WheelUnavailable, LookupError) as error:
        pytest.skip(f"the engine's storage modules cannot be loaded: {error}")
    yield module
    if not loaded:
        engine_wheel.unload_engine_storage()


def _built(settings: dict[str, Any] | None) -> dict[str, object]:
    """The extra_config the file-store machine builds its store with, after drawing a configuration unlike
    the pinned one (cap 16, ratio 0.5, a floor, the metadata cache on with TTL 30)."""
    machine: Any = machine_for("file-store", HiCacheFile, settings=settings)()
    try:
        machine.build(cap=16, ratio=0.5, min_free=6, disk_size=1 << 20, metadata=True, ttl=30.0)
        return dict(machine.extra_config)
    finally:
        machine.teardown()


@pytest.mark.clauses("F9", "O8")
def test_settings_pin_the_configuration_every_example_builds_and_the_report_shows_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The settings given override what the machine drew, the others take the engine's defaults (F9); with
    nothing pinned the drawn values stand; the report (text and JSON) prints the full configuration."""
    built = _built({"max_size": 10, "enable_metadata_cache": True})
    assert built["max_size"] == 10 and built["enable_metadata_cache"] is True
    assert built["eviction_ratio"] == DEFAULTS["eviction_ratio"] and built["min_free_space"] == 0
    assert built["metadata_ttl"] == DEFAULTS["metadata_ttl"]
    drawn = _built(None)
    assert (drawn["max_size"], drawn["eviction_ratio"], drawn["metadata_ttl"]) == (16, 0.5, 30.0)

    argv = ["file-store", "hicache:HiCacheFile", "--max-examples", "2", "--steps", "5"]
    settings = json.dumps({"max_size": 10, "eviction_ratio": 1.0})
    assert main([*argv, "--settings", settings]) == 0
    text = capsys.readouterr().out
    assert "settings: max_size=10, eviction_ratio=1.0, min_free_space=0, enable_metadata_cache=False" in text
    assert main([*argv, "--settings", settings, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["settings"] == {**DEFAULTS, "max_size": 10, "eviction_ratio": 1.0}
    assert check("file-store", HiCacheFile, max_examples=1, steps=2).settings is None


@pytest.mark.clauses("O5")
@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["file-store", "hicache:HiCacheFile", "--settings", '{"max_sise": 10}'], "max_sise"),
        (["file-store", "hicache:HiCacheFile", "--settings", '{"eviction_ratio": 2}'], "eviction_ratio"),
        (["file-store", "hicache:HiCacheFile", "--settings", "[1]"], "JSON object"),
        (["file-store", "hicache:HiCacheFile", "--settings", "{"], "not valid JSON"),
        (["metadata-cache", "hicache:MetadataCache", "--settings", '{"max_size": 10}'], "file-store"),
    ],
)
def test_a_wrong_setting_is_a_usage_error_naming_it(
    argv: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """O5: an unknown key, a value out of range, no JSON object, another component: exit 2, named."""
    assert main([*argv, "--max-examples", "1"]) == 2
    assert named in capsys.readouterr().err


@pytest.mark.slow("an oracle search to a pinned failure, then its reproduction")
@pytest.mark.clauses("O12", "O8")
def test_a_pinned_failure_shows_and_reproduces_the_configuration_it_ran(engine: ModuleType) -> None:
    """A sequential FAIL of the release's store with the cap pinned: the counterexample's build shows the
    pinned values (not the drawn ones), and the reproduction pins the same settings."""
    cap = {"max_size": 10, "eviction_ratio": 1.0}
    result = check(
        "file-store", engine.HiCacheFile, max_examples=20, steps=20, settings=cap, leave_out=["B1"]
    )
    assert result.verdict == "FAIL"
    builds = [line for f in result.failures for line in f.counterexample if line.startswith("state.build(")]
    assert builds and all("cap=10, ratio=1.0, min_free=0" in line for line in builds), builds
    assert all("metadata=False, ttl=5.0" in line for line in builds), builds
    pinned = {**DEFAULTS, **cap}
    assert all(f"settings={pinned!r}" in f.repro for f in result.failures)


@pytest.mark.slow("a threads search on the engine release's store, then its shortening: about 10 s")
@pytest.mark.clauses("O6", "O12", "C5")
def test_the_engine_form_runs_under_threads_with_the_pinned_settings(
    engine: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """O6, O12: hicache-oracle file-store <the release's HiCacheFile> --threads 4 --settings <cap + metadata
    cache>: built through the engine shim per history (its module's os and open interposed, their calls
    the scheduling points), it FAILs C5 (exit 1) with a history that the sequential replay does not
    explain away, and a reproduction of its scripts and schedule in the pinned configuration."""
    target = f"{engine.__name__}:HiCacheFile"
    settings = json.dumps(CAP_AND_METADATA)
    argv = ["file-store", target, "--threads", "4", "--histories", "40", "--settings", settings]
    assert main([*argv, "--leave-out", "B1", "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["adapter"]["form"] == "engine"
    assert result["settings"] == {**DEFAULTS, **CAP_AND_METADATA}
    assert "module sglang.srt.mem_cache.hicache_storage" in result["fs_control"]
    figures = result["figures"]
    assert figures["scheduling_decisions"] > figures["operations"]  # points inside the calls too
    assert result["verdict"] == "FAIL"
    assert result["clauses"] == ["C5"] and 1 <= result["calls"] <= 4 * 8  # four threads of at most 8 calls
    # The reproduction replays these scripts under that schedule with the pinned configuration, and fails
    # the same way on any machine: in the engine form a worker in a C call (torch, numpy's write) is
    # waited for, never taken as blocked, so the schedule does not depend on how long such a call takes.
    assert "replay_threads(" in result["repro"] and "SCHEDULE = [" in result["repro"]
    assert "'cap': 10, 'ratio': 1.0" in result["repro"] and "'metadata': True" in result["repro"]
    namespace: dict[str, Any] = {}
    exec(compile(result["repro"], "repro", "exec"), namespace)
    with pytest.raises(AssertionError, match="C5"):
        namespace["test_the_threads_history_is_linearizable"]()


@pytest.mark.slow(
    "the five configurations on the release's store at the tool's small budget (each a full search)"
)
@pytest.mark.clauses("O2", "O12", "F4", "V5", "C5")
def test_every_configuration_of_the_release_fails_with_a_reproduction_per_clause(
    engine: ModuleType, tmp_path: Any
) -> None:
    """Issue 31 part 3: every configuration users run FAILs on the release's HiCacheFile, each failing
    clause with its reproduction written (one file per clause), B1 left out as the engine's choice (O3)."""
    from tools import engine_verdicts

    budget = engine_verdicts.BUDGETS["small"]
    for configuration in engine_verdicts.CONFIGURATIONS:
        row = engine_verdicts.run_one("engine", engine.HiCacheFile, configuration, budget, tmp_path)
        assert row.verdict == "FAIL", (configuration.name, row)
        assert "B1" not in {c for clauses in row.clauses for c in clauses}
        folder = tmp_path / engine_verdicts.slug("engine") / configuration.slug
        written = sorted(p.name for p in folder.iterdir())
        assert len(written) == len(row.clauses), written
        assert all(text.startswith("test_repro_") for text in written)
