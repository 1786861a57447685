"""`python -m spec.conformance.mutation --survivors`: only the recorded survivors run again, and only when
tests were
only added since the recorded run (an added test cannot revive a killed mutant)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from spec.conformance import mutation


def _row() -> dict[str, Any]:
    survivors = [
        {"name": f"a.x__mutmut_{n}", "status": "survived", "equivalent": "", "diff": "-a\n+b"}
        for n in (1, 2, 3)
    ]
    stats = {"killed": 7, "survived": 3, "total": 10, "timeout": 0}
    return {"module": "hicache/a.py", "tests": ["tests/t.py"], "killed": 7, "total": 10, "equivalent": 0,
            "commit": "c0ffee", "stats": stats, "survivors": survivors}  # fmt: skip


@pytest.fixture
def score(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "mutation-score.json"
    path.write_text(json.dumps({"recorded": "2026-01-01 00:00 UTC", "modules": [_row()]}))
    monkeypatch.setattr(mutation, "SCORE", path)
    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    monkeypatch.setattr(mutation, "EQUIVALENT", {"a.x__mutmut_3": "why"})
    return path


def test_only_the_survivors_run_again_and_the_killed_ones_move_to_killed(
    score: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[list[str] | None] = []

    def mutate(module: str, jobs: int, only: list[str] | None = None) -> dict[str, Any]:
        ran.append(only)
        alive = {"name": "a.x__mutmut_2", "status": "survived", "equivalent": "", "diff": "-a\n+b"}
        return {"commit": "beef" * 10, "tests": ["tests/t.py", "tests/new.py"], "survivors": [alive]}

    monkeypatch.setattr(mutation, "mutate", mutate)
    monkeypatch.setattr(mutation, "_changed_since", lambda since, files: [])
    assert mutation.main(["--survivors", "hicache/a.py"]) == 1, "8 of 9 killable: under 95%"
    assert ran == [["a.x__mutmut_1", "a.x__mutmut_2"]], "the equivalent survivor does not run"
    [row] = json.loads(score.read_text())["modules"]
    assert (row["killed"], row["total"], row["equivalent"]) == (8, 10, 1)
    assert (row["stats"]["killed"], row["stats"]["survived"]) == (8, 2)
    assert [s["name"] for s in row["survivors"]] == ["a.x__mutmut_2", "a.x__mutmut_3"]
    assert row["tests"] == ["tests/t.py", "tests/new.py"] and row["commit"] == "beef" * 10
    assert row["rerun"].startswith("the 2 unexplained survivors of the run at c0ffee")
    assert row["rerun"].endswith("1 killed")


def test_a_module_or_test_file_changed_since_the_recorded_run_is_refused(
    score: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        mutation, "_changed_since", lambda since, files: [f for f in files if f == "tests/t.py"]
    )
    monkeypatch.setattr(mutation, "mutate", lambda *a, **k: pytest.fail("nothing may run"))
    with pytest.raises(SystemExit, match=r"^hicache/a.py: changed since c0ffee, run it whole: tests/t.py$"):
        mutation.main(["--survivors", "hicache/a.py"])
    assert json.loads(score.read_text())["modules"] == [_row()]
