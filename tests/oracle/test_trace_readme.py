"""The README's section "Check a concurrent variant, or a trace from any language" runs as written (issue 21):
its commands give the exit statuses it says, its recording example writes a trace that PASSes, and its
format example is a valid trace."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

from spec.oracle.__main__ import main
from spec.oracle._trace import check_trace

ROOT = Path(__file__).resolve().parents[2]
TITLE = "## Check a concurrent variant, or a trace from any language"


def section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index(TITLE)
    return text[start : text.index("\n## ", start + 1)]


@pytest.mark.clauses("O7")
def test_the_readme_trace_commands_exit_as_it_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commands = re.findall(r"^    hicache-oracle (.*--trace docs/\S+.*?)\s+# exit (\d)", section(), re.M)
    assert len(commands) == 2, "the section shows a PASS and a FAIL"
    monkeypatch.chdir(ROOT)
    for command, status in commands:
        argv = [str(tmp_path / a) if a.endswith(".svg") else a for a in shlex.split(command)]
        assert main(argv) == int(status), command
    assert (tmp_path / "race.svg").read_text().startswith("<?xml")


@pytest.mark.clauses("O9", "O7")
def test_the_readme_recording_example_writes_a_trace_that_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    block = re.search(r"```python\n(.*?)```", section(), re.S)
    assert block, "the section has a Python example"
    monkeypatch.chdir(tmp_path)
    exec(compile(block.group(1), "README.md", "exec"), {"__name__": "readme"})
    assert check_trace("metadata-cache", "cache.trace.jsonl").verdict == "PASS"


@pytest.mark.clauses("O7")
def test_the_readme_format_example_is_a_valid_trace(tmp_path: Path) -> None:
    text = section().split("**The format, hicache-trace/1**")[1]
    lines = [line.strip() for line in text.splitlines() if line.startswith("    {")]
    assert len(lines) == 5 and '"format": "hicache-trace/1"' in lines[0]
    path = tmp_path / "format.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = check_trace("metadata-cache", str(path))
    assert result.verdict == "PASS" and result.declared["eviction"] == "lru" and "M8" in result.left_out
    assert os.path.getsize(path) > 0
