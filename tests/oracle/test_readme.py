"""The README's "Check your own variant" example runs as written, and its reproduction file works
(issue 5)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def readme_example() -> str:
    """The first Python code block of the README section "Check your own variant"."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Check your own variant") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the section has a Python example"
    return match.group(1)


def _pytest(path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    (path.parent / "pytest.ini").write_text("[pytest]\n")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-c",
            str(path.parent / "pytest.ini"),
            str(path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )


@pytest.mark.clauses("M2", "M3", "M4")
def test_the_readme_example_runs_and_its_reproduction_fails_then_passes_on_a_fixed_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(readme_example(), "README.md", "exec"), {"__name__": "readme_example"})
    out = capsys.readouterr().out
    assert out.startswith("FAIL: ") and "PASS: " in out
    repro = tmp_path / "test_repro.py"
    assert _pytest(repro, {}).returncode == 1
    fixed = {"HICACHE_ORACLE_TARGET": "spec.variants.metadata_cache:TextbookHardTTL"}
    run = _pytest(repro, fixed)
    assert run.returncode == 0, run.stdout + run.stderr
