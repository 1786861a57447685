"""``make slowfs`` (benchmarks/bench_slowfs.py): the slow port counts the calls made under the store's lock
(so the table's 0 can fail), the workload's figures are consistent, and the chart is well-formed.  Latency
0: nothing here sleeps or depends on the machine's speed."""

from __future__ import annotations

import tempfile
import xml.etree.ElementTree as ET

import pytest

from benchmarks.bench_slowfs import (
    SlowFileSystem,
    _replace_section,
    _store,
    chart,
    miss_path,
    paired_speedup,
    prefetch,
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
