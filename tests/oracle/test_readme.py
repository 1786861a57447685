"""The README's "Check your own variant" example runs as written, and its reproduction file works
(issue 5)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import RunPytest

ROOT = Path(__file__).resolve().parents[2]


def readme_example() -> str:
    """The first Python code block of the README section "Check your own variant"."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Check your own variant") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the section has a Python example"
    return match.group(1)


@pytest.mark.clauses("M2", "M3", "M4")
@pytest.mark.slow("a search, then its reproduction run by pytest in two fresh processes")
def test_the_readme_example_runs_and_its_reproduction_fails_then_passes_on_a_fixed_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], run_pytest: RunPytest
) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(readme_example(), "README.md", "exec"), {"__name__": "readme_example"})
    out = capsys.readouterr().out
    assert out.startswith("FAIL: ") and "PASS: " in out
    repro = tmp_path / "test_repro.py"
    assert run_pytest(repro).returncode == 1
    fixed = {"HICACHE_ORACLE_TARGET": "spec.variants.metadata_cache:TextbookHardTTL"}
    run = run_pytest(repro, env=fixed)
    assert run.returncode == 0, run.stdout + run.stderr
