"""Traces written without Python pass through ``--trace`` with the right verdicts (O7, issue 21).

``tests/oracle/foreign/metadata_cache_trace.sh`` (POSIX sh and awk only) simulates a metadata cache on
three threads whose calls overlap, and writes hicache-trace/1 as an implementation in another
language would; the oracle's command line judges the files.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from spec.oracle.__main__ import main

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "oracle" / "foreign" / "metadata_cache_trace.sh"


def _shell(command: str, out: Path) -> None:
    if shutil.which("sh") is None or shutil.which("awk") is None:
        pytest.skip("no sh or awk on this machine: the trace is written by a shell script (awk)")
    subprocess.run(f"{command} > '{out}'", shell=True, check=True, cwd=ROOT, timeout=120)


def _oracle(trace: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any], str]:
    status = main(["metadata-cache", "--trace", str(trace), "--json"])
    out, err = capsys.readouterr()
    return status, json.loads(out) if out else {}, err


@pytest.mark.clauses("O7", "M3", "M4", "M7")
def test_an_awk_trace_passes_when_correct_and_fails_on_a_sliding_ttl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    correct, sliding, broken = tmp_path / "ok.jsonl", tmp_path / "sliding.jsonl", tmp_path / "broken.jsonl"
    only_z = tmp_path / "z.jsonl"
    _shell(f"sh '{SCRIPT}' correct 600 3", correct)
    _shell(f"sh '{SCRIPT}' sliding 600 3", sliding)
    _shell(f"sh '{SCRIPT}' sliding 0", only_z)
    _shell(f"sh '{SCRIPT}' correct 20 3 | sed '5s/\"invoke\"/\"invoked\"/'", broken)
    assert len(correct.read_text().splitlines()) == 1 + 600 + 3
    status, report, _ = _oracle(correct, capsys)
    assert status == 0 and report["verdict"] == "PASS" and report["figures"]["threads"] == 3
    assert {"M3", "M4", "M5", "M7"} <= set(report["passed_clauses"])
    status, report, _ = _oracle(sliding, capsys)
    assert status == 1 and report["verdict"] == "FAIL"
    assert all(f["clauses"][:2] == ["M3", "M4"] for f in report["failures"])
    status, report, _ = _oracle(only_z, capsys)
    lines = only_z.read_text().splitlines()
    assert status == 1 and report["clauses"] == ["M3", "M4"]
    assert report["counterexample"] == [f"line {n}: {lines[n - 1]}" for n in (2, 3, 4)]
    status, _, err = _oracle(broken, capsys)
    assert status == 2 and "broken.jsonl:5: field 'invoke': missing" in err and "Traceback" not in err
