"""``make slowfs`` (benchmarks/bench_slowfs.py): the slow port counts the calls made under the store's lock
(so the table's 0 can fail), the workload's figures are consistent, and the chart is well-formed.  Latency
0: nothing here sleeps or depends on the machine's speed."""

from __future__ import annotations

import re
import tempfile
import xml.etree.ElementTree as ET

import pytest

from benchmarks import bench_slowfs
from benchmarks.bench_slowfs import (
    SlowFileSystem,
    _replace_section,
    _store,
    chart,
    cpu_bound,
    miss_path,
    paired_speedup,
    prefetch,
    render,
)


@pytest.mark.clauses("F6", "C5")
def test_a_call_under_the_store_lock_is_counted_and_the_miss_path_makes_none() -> None:
    with tempfile.TemporaryDirectory() as root:
        fs = SlowFileSystem(0.0)
        store = _store(root, "s", fs, cache=True)
        assert not store.exists("k") and store.get("k") is None and store.set("k", b"v")
        assert fs.under_lock == 0
        with store._lock:
            store.exists("missing")  # a stat made while the lock is held: counted
        assert fs.under_lock == 1
        _ops, under, _cpu = miss_path(root, 0.0, threads=2, rounds=3)
        assert under == 0


@pytest.mark.clauses("F5", "F6")
def test_the_cache_answers_the_stored_prefix_of_a_chain_with_one_call() -> None:
    with tempfile.TemporaryDirectory() as root:
        off, on = (prefetch(root, 0.0, cache, queries=4) for cache in (False, True))
    assert on["calls"] == 1  # only the first new page goes to the filesystem
    assert off["calls"] > 16  # every stored page is one stat, and prefixes have 16 pages or more
    svg = ET.fromstring(chart({"prefetch": {"0.2 off": off, "0.2 on": on, "1 off": off, "1 on": on}}))
    assert len([e for e in svg.iter() if e.tag.endswith("polyline")]) == 4  # off/on x p50/p99


@pytest.mark.clauses("F6")
def test_make_slowfs_replaces_its_own_section_of_the_results_and_keeps_the_others() -> None:
    results = "# R\n\n## A\n\na\n\n## HiCacheFile on a slow metadata path\n\nold\n\n## B\n\nb\n"
    new = "## HiCacheFile on a slow metadata path\n\nnew"
    assert _replace_section(results, new) == "# R\n\n## A\n\na\n\n" + new + "\n\n## B\n\nb\n"
    assert _replace_section("# R\n\n## A\n\na\n", new) == "# R\n\n## A\n\na\n\n" + new + "\n"


@pytest.mark.clauses("F6")
def test_the_speed_up_is_the_median_of_the_pairs_own_not_a_ratio_of_medians() -> None:
    # A slow spell hits both runs of the second pair: its ratio is 4x like the others', while the
    # medians of each side (200 and 400) would say 2x.
    one, four = [100.0, 50.0, 200.0], [400.0, 200.0, 800.0]
    assert paired_speedup(one, four) == (4.0, 4.0, 4.0)
    assert paired_speedup([100.0, 100.0, 100.0], [300.0, 350.0, 400.0]) == (3.5, 3.0, 4.0)
    with pytest.raises(ValueError, match="one and four"):
        paired_speedup([1.0], [])


@pytest.mark.clauses("F6")
def test_the_cpu_bound_is_the_wall_clock_time_of_an_operation_over_its_cpu_time_at_most_the_threads() -> None:
    # 1,600 operations a second on one thread, 0.16 ms of CPU each: 0.625 ms a call, a fourth of it CPU.
    assert cpu_bound(1600.0, 0.16, 4) == pytest.approx(1000 / (1600 * 0.16))  # 3.91x: CPU-bound
    assert cpu_bound(500.0, 0.2, 4) == 4.0  # 2 ms a call, 0.2 of it CPU: the threads bound it
    assert cpu_bound(500.0, 0.0, 4) == 4.0
    with pytest.raises(ValueError, match="ops_one"):
        cpu_bound(0.0, 0.1, 4)


def _figures(ops_one_at_02: float, cpu_at_02: float) -> dict[str, object]:
    """A run's figures: at 0.2 ms, ``ops_one_at_02`` operations a second on one thread at ``cpu_at_02`` ms."""
    miss, speedup = {}, {}
    rows = ((0.2, ops_one_at_02, cpu_at_02, 3.3), (1, 500.0, 0.2, 3.9), (5, 110.0, 0.3, 4.0))
    for ms, ops, cpu, ratio in rows:
        miss[f"{ms:g} 1"], miss[f"{ms:g} 4"] = (ops, 0, cpu), (ops * ratio, 0, cpu)
        speedup[f"{ms:g}"] = (ratio, ratio - 0.2, ratio + 0.2)
    miss["0 1"], miss["0 4"], speedup["0"] = (60000.0, 0, 0.016), (15000.0, 0, 0.07), (0.25, 0.2, 0.3)
    return {
        "prefetch": {},
        "scan": {},
        "miss": miss,
        "speedup": speedup,
        "slept": {"0.2": 0.3, "1": 1.1, "5": 5.1},
        "bare": (0.5, 0.4, 0.6),
    }


@pytest.mark.clauses("F6")
def test_the_02_ms_figure_is_printed_beside_the_bound_its_run_measured_and_no_target_applies_there() -> None:
    text = render(_figures(1600.0, 0.16), quick=True)
    line = next(line for line in text.splitlines() if line.startswith("At 0.2 ms per call"))
    assert "4 threads did 3.30x the operations of 1 (pairs 3.10-3.50) beside a bound of 3.91x" in line
    assert "the run is CPU-bound there, and no target applies" in line
    assert ">= 3.5x target at 4 threads against 1 applies at >= 1 ms per call" in line
    assert "1 ms 3.90x, 5 ms 4.00x" in line
    rows = {row.split(" |")[0]: row for row in text.splitlines() if row.startswith("| ") and "ms (" in row}
    assert "| 3.91x | none |" in rows["| 0.2 ms (0.30 ms)"]
    assert "| 4.00x | >= 3.5x: met |" in rows["| 1 ms (1.10 ms)"]
    # Computed from the run's figures, not written out: a run whose operation costs less CPU has a higher
    # bound, up to the threads.
    other = render(_figures(1600.0, 0.08), quick=True)
    assert "beside a bound of 4.00x" in other and "the CPU alone would allow 4x here" in other


@pytest.mark.clauses("F6")
@pytest.mark.slow("the real slow-filesystem benchmark end to end: its latencies are simulated by sleeping")
def test_make_slowfs_prints_the_bound_beside_the_02_ms_figure(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A fast configuration of the real benchmark: two latencies, one pair of runs each, a small listing.
    monkeypatch.setattr(bench_slowfs, "LATENCIES_MS", (0.2, 1.0))
    monkeypatch.setattr(bench_slowfs, "REPEATS", 1)
    monkeypatch.setattr(bench_slowfs, "SCAN_FILES", (100,))
    assert bench_slowfs.main(["--quick"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("At 0.2 ms per call"))
    assert re.search(r"4 threads did \d+\.\d\dx the operations of 1 .* beside a bound of \d\.\d\dx", line)
    assert "no target applies" in line
    assert ">= 3.5x target at 4 threads against 1 applies at >= 1 ms per call" in line
