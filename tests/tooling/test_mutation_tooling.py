"""`python -m spec.conformance.mutation --annotate`: recorded survivors re-marked from EQUIVALENT;
nothing runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spec.conformance import mutation


def _survivor(name: str, equivalent: str = "") -> dict[str, str]:
    return {"name": name, "status": "survived", "equivalent": equivalent, "diff": "-a\n+b"}


def test_annotate_remarks_survivors_and_recomputes_the_totals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    score = tmp_path / "mutation-score.json"
    rows = [
        {
            "module": "hicache/a.py",
            "killed": 8,
            "total": 10,
            "equivalent": 0,
            "survivors": [_survivor("a.x__mutmut_1"), _survivor("a.x__mutmut_2")],
        },
        {
            "module": "hicache/b.py",
            "killed": 5,
            "total": 6,
            "equivalent": 1,
            "survivors": [_survivor("b.y__mutmut_3", "stale reason")],
        },
    ]
    score.write_text(json.dumps({"recorded": "2026-01-01 00:00 UTC", "modules": rows}))
    monkeypatch.setattr(mutation, "SCORE", score)
    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    monkeypatch.setattr(mutation, "EQUIVALENT", {"a.x__mutmut_2": "why it is equivalent"})
    assert mutation.main(["--annotate"]) == 1, "13 of 15 killable: under 95%"
    record = json.loads(score.read_text())
    assert record["recorded"] == "2026-01-01 00:00 UTC", "annotating is not a new run"
    a, b = record["modules"]
    assert [s["equivalent"] for s in a["survivors"]] == ["", "why it is equivalent"]
    assert b["survivors"][0]["equivalent"] == "", "a reason no longer in EQUIVALENT is dropped"
    assert (a["equivalent"], b["equivalent"], record["equivalent"]) == (1, 0, 1)
    assert (record["killed"], record["total"], record["score_without_equivalent"]) == (13, 16, 86.7)
    assert "13/16 killed" in capsys.readouterr().out


def test_the_tools_that_write_into_the_checkout_find_its_root() -> None:
    # verify writes .verify/ and reads docs/mutation-score.json, mutation copies the checkout: both from
    # their ROOT, which moved one level when they went into spec/conformance/
    from spec.conformance import mutation, verify

    for tool in (verify, mutation):
        assert (tool.ROOT / "pyproject.toml").is_file(), tool.__name__
        assert (tool.ROOT / "spec" / "conformance").is_dir(), tool.__name__
    assert verify.MUTATION_SCORE.is_file()
