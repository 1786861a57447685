"""The oracle's command line: exit 0 on PASS, 1 on a divergence, 2 on a usage or import error (issue 5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spec.oracle.__main__ import main

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = "spec.variants.metadata_cache"
SMALL = ["--max-examples", "20", "--steps", "15"]  # the failing targets here fail in a few examples


@pytest.mark.clauses("M4")
def test_a_conforming_target_exits_0_and_prints_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metadata-cache", f"{VARIANTS}:TextbookHardTTL", *SMALL]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS: ")
    assert "examples" in out and "distinct states" in out and "time: injected" in out


@pytest.mark.clauses("M2")
def test_a_divergence_exits_1_and_prints_the_reproduction(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    repro = tmp_path / "test_repro.py"
    assert main(["metadata-cache", f"{VARIANTS}:BoundaryExclusive", *SMALL, "--repro", str(repro)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL: ")
    assert "breaks: M2" in out
    assert "def test_metadata_cache_answers_as_the_spec" in out
    assert repro.read_text() in out


@pytest.mark.clauses("M2")
def test_json_report_carries_verdict_clauses_counterexample_and_figures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["metadata-cache", f"{VARIANTS}:BoundaryExclusive", *SMALL, "--json", "--seed", "0"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"] == "FAIL"
    assert report["seed"] == 0
    assert report["clauses"][0] == "M2"
    opening = ("clock = FakeClock(", "cache = BoundaryExclusive(")  # the clock's start, the construction
    assert report["counterexample"][0].startswith(opening[0]), report["counterexample"]
    assert report["counterexample"][1].startswith(opening[1]), report["counterexample"]
    calls = [c for c in report["counterexample"][2:] if not c.startswith("clock.")]
    assert report["calls"] == len(calls)
    assert set(report["figures"]) == {"examples", "steps", "distinct_states", "seconds", "clock_reads"}


@pytest.mark.clauses("M4")
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["no-such-component", f"{VARIANTS}:TextbookHardTTL"], "unknown component"),
        (["metadata-cache", "not_a_path"], "package.module:Class"),
        (["metadata-cache", "no_such_module_anywhere:Cache"], "cannot import module"),
        (["metadata-cache", f"{VARIANTS}:NoSuchClass"], "has no attribute"),
        (["metadata-cache", f"{VARIANTS}:WRONG"], "not a class or a factory"),
        (["existence-cache", f"{VARIANTS}:TextbookHardTTL"], "has no method 'contains_all'"),
        (["metadata-cache", "spec.variants.existence_cache:TextbookExistenceLRU"], "cannot build"),
        (["metadata-cache", f"{VARIANTS}:TextbookHardTTL", "--adapter", "{not json"], "not valid JSON"),
        (["metadata-cache", f"{VARIANTS}:TextbookHardTTL", "--adapter", '{"rename": {}}'], "unknown keys"),
        (["metadata-cache", f"{VARIANTS}:TextbookHardTTL", "--max-examples", "0"], "max_examples"),
        (["metadata-cache"], "give a component and a target"),
    ],
)
def test_usage_and_import_errors_exit_2_with_a_clear_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.clauses("M4")
def test_a_target_without_a_required_method_is_a_usage_error_that_suggests_an_adapter(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["pool-beliefs", "spec.variants.metadata_cache:Counters"]) == 2
    assert "cannot build" in capsys.readouterr().err


@pytest.mark.clauses("M2")
def test_the_module_entry_point_exits_with_the_verdict_as_its_status() -> None:
    def run(*argv: str) -> int:
        return subprocess.run(
            [sys.executable, "-m", "spec.oracle", *argv, *SMALL], cwd=ROOT, capture_output=True
        ).returncode

    assert run("metadata-cache", f"{VARIANTS}:PlainHardTTLSet") == 0
    assert run("metadata-cache", f"{VARIANTS}:BoundaryExclusive", "--seed", "0") == 1
    assert run("metadata-cache", "nowhere:Nothing") == 2


@pytest.mark.clauses("M4")
def test_list_names_every_component_and_whether_its_machine_is_here(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    for component in ("metadata-cache: available", "existence-cache: available", "pool-beliefs: available"):
        assert component in out


@pytest.mark.clauses("M4")
@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("raise RuntimeError('no config file')\n", "RuntimeError: no config file"),
        ("def broken(:\n    pass\n", "SyntaxError: "),
        (
            "class Cache:\n    def __init__(self, ttl_seconds):\n        raise RuntimeError('no GPU')\n",
            "no GPU",
        ),
    ],
    ids=["raises-at-import", "syntax-error", "raises-when-built"],
)
def test_any_exception_importing_or_building_the_target_is_a_one_line_usage_error(
    source: str,
    error: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
) -> None:
    module = f"oracle_broken_{request.node.callspec.id.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["metadata-cache", f"{module}:Cache", *SMALL]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("hicache-oracle: error: "), err
    assert f"{module}" in err and error in err


@pytest.mark.clauses("M2")
def test_output_into_a_closed_pipe_ends_without_a_traceback() -> None:
    read, write = os.pipe()
    os.close(read)  # as `| head` does once it has its lines: every write now fails with EPIPE
    try:
        done = subprocess.run(
            [sys.executable, "-m", "spec.oracle", "metadata-cache", f"{VARIANTS}:BoundaryExclusive", *SMALL],
            cwd=ROOT,
            stdout=write,
            stderr=subprocess.PIPE,
        )
    finally:
        os.close(write)
    assert done.returncode == 1  # the verdict stands
    assert b"Traceback" not in done.stderr and b"BrokenPipeError" not in done.stderr, done.stderr


def test_the_console_script_without_hypothesis_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    from spec import oracle_entry

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "hypothesis" else real(name, *a)
    )
    assert oracle_entry.main(["metadata-cache", f"{VARIANTS}:TextbookHardTTL"]) == 2
    err = capsys.readouterr().err
    assert "pip install hypothesis pytest" in err and "[oracle]'" in err, err


def test_the_console_script_runs_the_oracle(capsys: pytest.CaptureFixture[str]) -> None:
    from spec import oracle_entry

    assert oracle_entry.main(["--list"]) == 0
    assert "metadata-cache: available" in capsys.readouterr().out
    script = Path(sys.executable).with_name("hicache-oracle")
    if not script.exists():
        pytest.skip(f"the console script is not installed next to {sys.executable} (pip install -e .)")
    done = subprocess.run([str(script), "--list"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and "file-store: available" in done.stdout, done.stderr
