"""``hicache-oracle COMPONENT --trace FILE`` (O7): recorded histories judged against the spec (issue 21).

The traces here are written by hand, line by line, so that each verdict can be
read off: a PASS, a FAIL with the lines no order explains and the clause, an
UNKNOWN when the budget runs out, exit 2 naming the line and the field of a
malformed file, and the picture of a failing history.
"""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from spec.linearizability.checker import Operation
from spec.oracle import _trace
from spec.oracle.__main__ import main
from spec.oracle._picture import draw_history
from spec.oracle._run import OracleResult
from spec.oracle._trace import check_trace

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "traces" / "metadata-cache.jsonl"
RACE = ROOT / "docs" / "traces" / "metadata-cache-race.jsonl"
SVG = "{http://www.w3.org/2000/svg}"

METADATA = {"format": "hicache-trace/1", "component": "metadata-cache", "config": {"ttl_seconds": 1.0}}


def write(tmp_path: Path, header: dict[str, Any], *calls: dict[str, Any] | str, name: str = "t.jsonl") -> str:
    lines = [json.dumps(header), *(c if isinstance(c, str) else json.dumps(c) for c in calls)]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def call(
    thread: Any, op: str, args: list[Any], invoke: float, ret: float | None, result: Any = None, **more: Any
) -> dict[str, Any]:
    line = {"thread": thread, "op": op, "args": args, "invoke": invoke, "result": result, **more}
    if ret is not None:
        line["return"] = ret
    return line


@pytest.mark.clauses("O7", "M4", "M7")
def test_the_docs_example_passes_and_the_race_fails_naming_the_lines_no_order_explains(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["metadata-cache", "--trace", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS: trace ") and "M7" in out.split("passed:")[1]
    assert main(["metadata-cache", "--trace", str(RACE), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"] == "FAIL" and report["clauses"] == ["M4"]
    assert [line.split(":")[0] for line in report["counterexample"]] == ["line 4", "line 6"]
    assert "line(s) 6 after the calls on line(s) 4" in report["message"]
    assert "M7" not in report["passed_clauses"], "a trace with an unexplained answer does not show atomicity"


def test_the_report_has_the_shape_of_the_other_modes(tmp_path: Path) -> None:
    other = OracleResult("metadata-cache", "x:Y", "PASS", 0, {}, "", {}, {}).as_dict()
    result = check_trace("metadata-cache", str(EXAMPLE)).as_dict()
    assert set(result) == set(other)  # (tests/oracle/test_json_shape.py holds all three to the README)
    every = {*result["passed_clauses"], *result["left_out"], *result["not_checked"]}
    assert every == {"M2", "M3", "M4", "M5", "M6", "M7", "M8", "M9", "B1"}, result  # O8: each one accounted
    assert {"examples", "steps", "distinct_states", "seconds", "calls", "threads", "parts"} <= set(
        result["figures"]
    )


@pytest.mark.clauses("O7", "M6")
def test_the_fail_repro_is_itself_a_trace_that_fails_the_same_way(tmp_path: Path) -> None:
    bounded = {**METADATA, "config": {"ttl_seconds": -1, "max_entries": 2}}
    path = write(
        tmp_path,
        bounded,
        call(0, "add", ["a"], 1, 2),
        call(1, "contains", ["z"], 1, 9, False),
        call(0, "add", ["b"], 3, 4),
        call(0, "add", ["c"], 5, 6),
        call(0, "contains", ["c"], 7, 8, True),
        call(0, "contains", ["a"], 7, 8, True),  # the newest before c was evicted, not the oldest: M6
    )
    result = check_trace("metadata-cache", path)
    assert result.verdict == "FAIL" and result.clauses[0] == "M6"
    assert "line 3" not in "".join(result.counterexample), "an unrelated call is not printed"
    again = tmp_path / "repro.jsonl"
    again.write_text(result.repro)
    repeat = check_trace("metadata-cache", str(again))
    assert repeat.verdict == "FAIL" and repeat.clauses == result.clauses


@pytest.mark.clauses("O7", "M2", "M3")
def test_a_recorded_now_a_call_that_never_returned_and_lines_in_any_order(tmp_path: Path) -> None:
    lines = [
        call(2, "contains", ["k"], 1.0, 5.0, True, now=2.5),
        call(1, "add", ["k"], 1.0, 2.0),
        call(3, "contains", ["k"], 3.4, 3.6, False),  # the add was at 2.0 at the latest: dead after 3.0
        call(3, "add", ["j"], 4.0, None),  # never returned
        call(3, "contains", ["j"], 4.5, 4.6, True),  # it took effect
    ]
    assert check_trace("metadata-cache", write(tmp_path, METADATA, *lines)).verdict == "PASS"
    lines[0]["now"] = 3.5  # k was seen alive at 3.5, and dead at 3.4..3.6 by a call that came first
    lines[2]["now"] = 3.4
    assert check_trace("metadata-cache", write(tmp_path, METADATA, *lines)).verdict == "FAIL"
    lines[0]["now"] = 3.0
    assert check_trace("metadata-cache", write(tmp_path, METADATA, *lines)).verdict == "PASS"


def test_an_exhausted_budget_is_unknown_exit_3_with_what_it_tried(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bounded = {**METADATA, "config": {"ttl_seconds": -1, "max_entries": 4}}
    calls = [call(t, "contains", [f"k{t}"], 0, 10, False) for t in range(8)]
    path = write(tmp_path, bounded, *calls, call(8, "contains", ["x"], 0, 10, True))
    assert main(["metadata-cache", "--trace", path, "--max-steps", "50", "--json"]) == 3
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"] == "UNKNOWN" and report["passed_clauses"] == []
    assert "after 50 steps" in report["message"] and "9 calls" in report["message"]
    assert main(["metadata-cache", "--trace", path]) == 1  # the default budget refutes it


# A malformed call line after a good header: the line, and the field that line 2 gets wrong.
_BAD_CALLS = [
    ('{"thread": 1, "op": "pop", "invoke": 1}', "op"),
    ('{"thread": 1, "op": "add", "args": "k", "invoke": 1}', "args"),
    ('{"thread": 1, "op": "add", "args": [], "invoke": 1}', "args"),
    ('{"thread": 1, "op": "add_many", "args": ["k"], "invoke": 1}', "args"),
    ('{"thread": 1, "op": "add", "args": [{}], "invoke": 1}', "args"),
    ('{"thread": 1, "op": "add", "args": ["k"], "invoke": 2, "return": 1}', "return"),
    ('{"thread": 1, "op": "add", "args": ["k"], "invoke": 1, "return": 2}', "result"),
    ('{"thread": 1.5, "op": "add", "args": ["k"], "invoke": 1}', "thread"),
    ('{"thread": 1, "op": "len", "invoke": 1, "return": 2, "result": 0, "now": 3}', "now"),
    ('{"thread": 1, "op": "len", "invoke": NaN}', "invoke"),
]


@pytest.mark.clauses("O7")
@pytest.mark.parametrize(
    ("lines", "where"),
    [
        ([], "t.jsonl:1: the file is empty"),
        (["not json"], "t.jsonl:1: not JSON"),
        (['{"format": "hicache-trace/2", "component": "metadata-cache"}'], "t.jsonl:1: field 'format'"),
        (['{"format": "hicache-trace/1", "component": "existence-cache"}'], "t.jsonl:1: field 'component'"),
        (
            ['{"format": "hicache-trace/1", "component": "metadata-cache", "config": {}}'],
            "t.jsonl:1: field 'config'",
        ),
        ([json.dumps({**METADATA, "declare": {"eviction": "fifo"}})], "t.jsonl:1: field 'declare'"),
        ([json.dumps({**METADATA, "leave_out": ["Z9"]})], "t.jsonl:1: field 'leave_out'"),
        (
            [json.dumps(METADATA), "", '{"thread": 1, "op": "add", "args": ["k"]}'],
            "t.jsonl:3: field 'invoke'",
        ),
        *(([json.dumps(METADATA), line], f"t.jsonl:2: field {field!r}") for line, field in _BAD_CALLS),
    ],
)
def test_a_malformed_trace_is_exit_2_naming_the_line_and_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: list[str], where: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines))
    assert main(["metadata-cache", "--trace", str(path)]) == 2
    err = capsys.readouterr().err
    assert where in err and "Traceback" not in err


def test_a_component_that_has_no_trace_mode_or_a_missing_component_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["file-store", "--trace", str(EXAMPLE)]) == 2
    assert (
        "--trace checks the components metadata-cache, existence-cache, pool-beliefs"
        in capsys.readouterr().err
    )
    assert main(["--trace", str(EXAMPLE)]) == 2
    assert "give the component" in capsys.readouterr().err


def test_unknown_fields_are_ignored_and_unjudged_calls_are_reported_not_checked(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {**METADATA, "config": {"ttl_seconds": 1.0, "shards": 8}, "engine": "go"},
        call(1, "add", ["k"], 1, 2, None, goroutine=17),
        call(1, "stats", [], 3, 4, {"hits": 1}),
        call(1, "contains", ["k"], 5, 5.5, False),  # alive until 3 at the latest: dead at 5
    )
    result = check_trace("metadata-cache", path)
    assert result.verdict == "PASS"
    assert "1 call(s) of stats in the trace, not judged" in result.missing["stats"]
    assert "config shards" in result.missing and "M8" in result.not_checked
    assert set(result.left_out) <= {"M5", "M6", "M9"}, "left_out holds clause groups only"


@pytest.mark.clauses("O7", "M9", "O3")
def test_a_left_out_clause_is_stepped_but_not_judged(tmp_path: Path) -> None:
    forever = {**METADATA, "config": {"ttl_seconds": -1}}
    left_out = {**forever, "leave_out": ["M9"]}
    lines = [
        call(1, "add_many", [["a", "b"]], 1, 2),
        call(1, "contains_many", [["a", "b"]], 3, 4, [True, True]),
    ]
    wrong = [*lines, call(1, "contains_prefix", [["a", "x", "b"]], 5, 6, 2)]  # counts past the miss
    assert check_trace("metadata-cache", write(tmp_path, forever, *wrong)).clauses == ["M9"]
    left = check_trace("metadata-cache", write(tmp_path, left_out, *wrong))
    assert left.verdict == "PASS" and "M9" in left.left_out and "M9" not in left.passed_clauses
    after = [*wrong, call(1, "contains", ["b"], 7, 8, False)]  # the batch's adds still took effect
    assert check_trace("metadata-cache", write(tmp_path, left_out, *after)).verdict == "FAIL"


@pytest.mark.clauses("O7", "E3", "E6", "B1")
def test_an_existence_cache_trace_with_an_exception_as_an_answer(tmp_path: Path) -> None:
    header = {"format": "hicache-trace/1", "component": "existence-cache", "config": {"max_entries": 2}}
    lines = [
        call(1, "add", ["p", ["h1", "h2", "h3"]], 1, 2),  # keeps only h2, h3
        call(1, "contains", ["p", "h1"], 3, 4, False),
        call(1, "contains_all", ["p", ["h2", "h3"]], 5, 6, True),
        {
            "thread": 1,
            "op": "invalidate_beyond",
            "args": ["p", ["h2"], -1],
            "invoke": 7,
            "return": 8,
            "error": "ValueError",
        },
        call(1, "len", [], 9, 10, 2),
    ]
    assert check_trace("existence-cache", write(tmp_path, header, *lines)).verdict == "PASS"
    lines[3] = call(1, "invalidate_beyond", ["p", ["h2"], -1], 7, 8, None)  # took a negative keep_pages
    result = check_trace("existence-cache", write(tmp_path, header, *lines))
    assert result.verdict == "FAIL" and result.clauses == ["E6"]
    lines[1] = call(1, "contains", ["p", "h1"], 3, 4, True)
    assert check_trace("existence-cache", write(tmp_path, header, *lines[:2])).clauses == ["E3"]


@pytest.mark.clauses("O7", "P2", "P3", "P4")
def test_a_pool_beliefs_trace_is_judged_pool_by_pool(tmp_path: Path) -> None:
    header = {"format": "hicache-trace/1", "component": "pool-beliefs", "config": {"max_entries": 1}}
    lines = [
        call(1, "pool.add", ["a", ["h1"]], 1, 2),
        call(2, "pool.add", ["b", ["h2"]], 1, 2),  # its own bound: a's belief stays
        call(1, "pool.track_inflight", ["a", ["h9"]], 3, 4),
        call(1, "pool.covered", ["a", ["h1", "h9"]], 5, 6, True),
        call(2, "pool.contains", ["b", "h2"], 5, 6, True),
    ]
    passed = check_trace("pool-beliefs", write(tmp_path, header, *lines))
    assert passed.verdict == "PASS" and passed.parts == 2
    lines.append(call(1, "pool.untrack_inflight", ["a", ["h9"]], 7, 8))
    lines.append(call(1, "pool.covered", ["a", ["h9"]], 9, 10, True))
    failed = check_trace("pool-beliefs", write(tmp_path, header, *lines))
    assert failed.verdict == "FAIL" and failed.clauses == ["P4"]
    lines.append(call(1, "clear", [], 11, 12))  # the registry's own call: one part for every pool
    assert check_trace("pool-beliefs", write(tmp_path, header, *lines)).parts == 1


def _random_trace(rng: random.Random) -> list[dict[str, Any]]:
    lines, clock = [], 0.0
    for _ in range(12):
        clock += rng.choice([0.1, 0.3, 0.6])
        op = rng.choice(["add", "contains", "contains", "remove"])
        lines.append(
            call(
                rng.randint(0, 2),
                op,
                [rng.choice("ab")],
                clock,
                clock + rng.choice([0.05, 0.5, 1.2]),
                rng.random() < 0.5 if op == "contains" else None,
            )
        )
    return lines


@pytest.mark.clauses("O7", "M7")
def test_judging_key_by_key_gives_the_verdict_of_the_whole_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(21)
    traces = [write(tmp_path, METADATA, *_random_trace(rng), name=f"t{i}.jsonl") for i in range(30)]
    split = [check_trace("metadata-cache", t) for t in traces]
    assert all(r.parts == 2 for r in split)
    monkeypatch.setattr(_trace, "_part_of", lambda trace: None)
    whole = [check_trace("metadata-cache", t) for t in traces]
    assert all(r.parts == 1 for r in whole)
    assert [r.verdict for r in split] == [r.verdict for r in whole]
    assert {"PASS", "FAIL"} <= {r.verdict for r in split}


def _bars(svg: str) -> list[tuple[str, str, str]]:
    """(lane's thread, bar's thread, bar's index) for every bar of the picture."""
    root = ET.fromstring(svg)
    return [
        (lane.get("data-thread", ""), bar.get("data-thread", ""), bar.get("data-index", ""))
        for lane in root.iter(f"{SVG}g")
        if lane.get("class") == "lane"
        for bar in lane.iter(f"{SVG}rect")
        if "call" in (bar.get("class") or "").split()
    ]


@pytest.mark.clauses("O7")
def test_the_picture_has_one_bar_per_call_in_its_threads_lane(tmp_path: Path) -> None:
    history = [
        Operation(0, "add", ("a",), None, 0.0, 2.0),
        Operation(1, "contains", ("a",), True, 1.0, 3.0, now=1.5),
        Operation("w", "contains", ("<b>",), False, 2.5, None),
        Operation(0, "len", (), 1, 4.0, 5.0),
    ]
    svg = draw_history(history, {1}, [1.5], title="a & b")
    bars = _bars(svg)
    assert sorted(int(index) for _, _, index in bars) == [0, 1, 2, 3]
    assert all(lane == thread == str(history[int(index)].thread) for lane, thread, index in bars)
    root = ET.fromstring(svg)
    red = [r for r in root.iter(f"{SVG}rect") if "unexplained" in (r.get("class") or "")]
    assert [r.get("data-index") for r in red] == ["1"]
    assert len([line for line in root.iter(f"{SVG}line") if line.get("class") == "instant"]) == 1
    assert "<script" not in svg


def test_the_cli_draws_the_failing_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    picture = tmp_path / "race.svg"
    assert main(["metadata-cache", "--trace", str(RACE), "--picture", str(picture)]) == 1
    bars = _bars(picture.read_text())
    drawn = check_trace("metadata-cache", str(RACE)).picture_history()[0]
    assert len(bars) == len(drawn) and len(drawn) >= 2
    assert all(lane == thread for lane, thread, _ in bars)
    assert main(["metadata-cache", "--trace", str(EXAMPLE), "--picture", str(tmp_path / "none.svg")]) == 0
    assert not (tmp_path / "none.svg").exists(), "a PASS draws nothing"
