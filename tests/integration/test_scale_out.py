"""The scale-out recipe of docs/VERIFY.md, run locally.

xdist workers given as ``--tx`` specs (here ``popen``; on other machines ``ssh=...``) share one
Hypothesis example database directory, so a failure that one worker finds replays on any machine that
runs the same suite against that directory.  The project's own ``tests/conftest.py`` (its knobs
``HICACHE_HYPOTHESIS_DB`` and ``HICACHE_VERIFY_EXAMPLES``) is copied beside a property with a planted
bug that a single derandomized example does not reach.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PLANTED = """
from hypothesis import given, strategies as st


@given(st.integers(min_value=0, max_value=10**6))
def test_planted_bug(n):
    assert n <= 1000, f"planted bug at {n}"
"""

FILLER = """
import pytest


@pytest.mark.parametrize("i", range(6))
def test_filler(i):
    assert i >= 0
"""


def _run(project: Path, db: Path | None, *args: str, examples: int) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HYPOTHESIS_PROFILE": "verify",
        "HICACHE_HYPOTHESIS_DB": str(db or ""),
        "HICACHE_VERIFY_EXAMPLES": str(examples),
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(project), *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def _falsified_at(output: str) -> set[int]:
    return {int(n) for n in re.findall(r"planted bug at (\d+)", output)}


@pytest.mark.verify_tier
def test_a_failure_found_by_remote_style_workers_replays_from_the_shared_database(tmp_path: Path) -> None:
    project = tmp_path / "suite"
    project.mkdir()
    shutil.copy(ROOT / "tests" / "conftest.py", project / "conftest.py")
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "test_planted.py").write_text(PLANTED)
    (project / "test_filler.py").write_text(FILLER)
    shared = tmp_path / "shared-db"

    # "Machine A": two workers started from --tx specs, sharing the database (so with random seeds),
    # with a search budget that finds the bug for certain.
    workers = ["--tx", f"2*popen//python={sys.executable}", "--dist", "load", "-v"]
    found = _run(project, shared, *workers, examples=500)
    assert found.returncode == 1, found.stdout + found.stderr
    assert "created: 2/2 workers" in found.stdout, found.stdout
    assert {"gw0", "gw1"} <= set(re.findall(r"\[(gw\d)\] \[", found.stdout)), found.stdout  # both ran tests
    first = _falsified_at(found.stdout)
    assert first, found.stdout
    assert any(p.is_file() for p in shared.rglob("*")), "the workers saved nothing in the shared database"

    # "Machine B": one process and one example.  Derandomized and without the database, that example
    # does not reach the bug ...
    alone = _run(project, None, examples=1)
    assert alone.returncode == 0, alone.stdout + alone.stderr
    # ... but pointed at the shared database it replays the failure A found, shrunk to the same example.
    replayed = _run(project, shared, examples=1)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert _falsified_at(replayed.stdout) == first
