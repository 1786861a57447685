"""O3 and V3-bg: a target that evicts in the background declares it, ``--declare eviction=background``
(``check(..., declare={"eviction": "background"})``), for ``file-evictor`` and ``file-store``; the machines
then run its pass, ``evict()``, as a step, and the report lists V3-bg, not V3, among what it checked.
Which variants pass and fail which clause is the catalogue's (tests/oracle/catalogue.py); here: the
command line, the report, the usage errors and the adapter that names the pass.
"""

from __future__ import annotations

import json
from typing import ClassVar

import pytest

from spec.oracle import check
from spec.oracle.__main__ import main
from spec.variants.file_evictor import BackgroundLRUFileEvictor

BACKGROUND = {"eviction": "background"}
BUDGET = ["--max-examples", "30", "--steps", "15", "--json"]


class DrainsByAnotherName(BackgroundLRUFileEvictor):
    """A background evictor whose pass is called ``drain`` (its ``evict`` is never called)."""

    drains: ClassVar[list[int]] = []

    def drain(self) -> bool:
        type(self).drains.append(1)
        return super().evict()

    def evict(self) -> bool:
        raise AssertionError("the adapter maps the pass to drain()")


@pytest.mark.clauses("O3", "V3-bg")
@pytest.mark.parametrize(
    ("component", "target"),
    [
        ("file-evictor", "spec.variants.file_evictor:BackgroundEvictor"),
        ("file-store", "spec.variants.file_store:BackgroundStore"),
    ],
)
def test_the_cli_takes_eviction_background_and_reports_v3_bg_checked(
    component: str, target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([component, target, *BUDGET, "--declare", "eviction=background"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["declared"]["eviction"] == "background"
    if component == "file-evictor":  # the store's component lists no clauses as passed
        passed = report["passed_clauses"]
        assert "V3-bg" in passed and "V3" not in passed, passed


@pytest.mark.clauses("O3", "V3")
@pytest.mark.slow("an oracle search that goes on after its first failure (tests/stateful shows V3 at once)")
def test_undeclared_the_same_evictor_fails_v3(capsys: pytest.CaptureFixture[str]) -> None:
    target = "spec.variants.file_evictor:BackgroundEvictor"
    assert main(["file-evictor", target, *BUDGET, "--leave-out", "V5"]) == 1  # inline, the default
    report = json.loads(capsys.readouterr().out)
    assert report["declared"]["eviction"] == "inline"
    assert report["failures"][0]["clauses"][0] == "V3", report["failures"]


@pytest.mark.clauses("O3", "V3-bg")
def test_the_summary_prints_the_declaration_and_the_failing_variant_clause() -> None:
    result = check(
        "file-evictor",
        "spec.variants.file_evictor:NeverDrains",
        declare=BACKGROUND,
        max_examples=20,
        steps=15,
        every_clause=False,
    )
    assert result.verdict == "FAIL"
    assert result.clauses[0] == "V3-bg", result.summary()
    assert "eviction=background" in result.summary()
    assert "declare={'commit': 'mru'" in result.repro and "'eviction': 'background'" in result.repro
    assert "V3-bg" not in result.passed_clauses


@pytest.mark.clauses("O3", "O5", "V3-bg")
@pytest.mark.parametrize(
    ("component", "target"),
    [
        ("file-evictor", "spec.variants.file_evictor:OsEvictor"),
        ("file-store", "hicache:HiCacheFile"),
    ],
)
def test_declaring_background_without_a_pass_to_call_is_a_usage_error(
    component: str, target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([component, target, "--declare", "eviction=background"]) == 2
    err = capsys.readouterr().err
    assert "--declare eviction=background: the target has no method 'evict'" in err
    assert '"methods": {"evict": "its_name"}' in err


@pytest.mark.clauses("O3", "O5")
def test_an_unknown_eviction_value_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    target = "spec.variants.file_evictor:BackgroundEvictor"
    assert main(["file-evictor", target, "--declare", "eviction=lazy"]) == 2
    assert "eviction is one of inline, background" in capsys.readouterr().err


@pytest.mark.clauses("O3", "V3-bg")
def test_an_adapter_names_the_pass_when_the_target_calls_it_something_else() -> None:
    DrainsByAnotherName.drains.clear()
    result = check(
        "file-evictor",
        DrainsByAnotherName,
        adapter={"methods": {"evict": "drain"}},
        declare=BACKGROUND,
        max_examples=30,
        steps=15,
    )
    assert result.passed, result.summary()
    assert DrainsByAnotherName.drains, "the machine ran the passes through the adapter's name"
