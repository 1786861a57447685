"""``make hitrate`` (benchmarks/hitrate.py): seeded, deterministic figures, a table and a well-formed SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from benchmarks.hitrate import S, chart, hit_rate, sweep, table, zipf_stream


@pytest.mark.clauses("M6", "M6-lru")
def test_the_stream_is_seeded_and_skewed() -> None:
    stream = zipf_stream(100, 1.0, 2000, seed=13)
    assert stream == zipf_stream(100, 1.0, 2000, seed=13)
    assert all(0 <= k < 100 for k in stream)
    assert stream.count(0) > stream.count(50) * 5, "rank 0 is drawn far more often than rank 50"


@pytest.mark.clauses("M6", "M6-lru")
def test_without_a_bound_to_hit_both_orders_have_the_same_hit_rate() -> None:
    stream = zipf_stream(50, 1.0, 1000, seed=1)
    assert hit_rate(stream, 50, -1, "birth", 100) == hit_rate(stream, 50, -1, "lru", 100)


@pytest.mark.clauses("M6-lru")
def test_the_sweep_gives_a_table_row_and_a_chart_point_per_size_order_and_exponent() -> None:
    figures = sweep((16, 32), measured=10)
    assert len(figures) == 2 and all(list(by_s) == [f"s={s}" for s in S] for by_s in figures.values())
    rows = table(figures).splitlines()
    assert len(rows) == 2 + 2 * len(S) * 2
    svg = ET.fromstring(chart(figures))
    circles = [e for e in svg.iter() if e.tag.endswith("circle")]
    assert len(circles) == 2 * len(S) * 2 * 2  # TTL panels x exponents x orders x sizes
    assert all(0 <= float(c.attrib["cy"]) <= float(svg.attrib["height"]) for c in circles)
