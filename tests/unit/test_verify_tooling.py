"""The make-verify tooling cannot pass a contract that checked nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from spec import verify
from spec.contract_names import UnresolvedName, unresolved_names
from spec.report import StepResult
from spec.verify import ROOT, contract_modules, crosshair_check

VACUOUS = '''
def double(x: int) -> int:
    """M2: a contract whose precondition names a module that was never imported.

    pre: math.isfinite(x)
    post: __return__ == 2 * x
    """
    return 2 * x
'''


def test_a_contract_whose_precondition_cannot_be_met_is_reported_as_a_failure() -> None:
    """Regression: ruff removed ``import math`` (used only in docstrings) from the spec, and CrossHair
    answered 'Unable to meet precondition' for every contract, which the report counted as held."""
    probe = ROOT / ".verify" / "vacuous_contract_probe.py"
    probe.parent.mkdir(exist_ok=True)
    probe.write_text(VACUOUS)
    try:
        _, conditions = crosshair_check(probe, 1.0)
    finally:
        probe.unlink()
    assert conditions, "CrossHair reported no condition at all"
    assert all(c.verdict == "error" and c.message.startswith("vacuous contract") for c in conditions)
    assert conditions[0].clauses == ["M2"]


HARD_PRECONDITION = '''
def same(key: str, other: str, ns: str) -> bool:
    """F1: three strings under several string preconditions (CrossHair needs a moment to meet them).

    pre: key != "" and not key.startswith(".") and "/" not in key and chr(0) not in key
    pre: other != "" and not other.startswith(".") and "/" not in other and chr(0) not in other
    pre: ns == "" or ns.startswith("_")
    post: not __return__ or key == other
    """
    return key == other
'''


def _probe(name: str, text: str) -> Path:
    probe = ROOT / ".verify" / name
    probe.parent.mkdir(exist_ok=True)
    probe.write_text(text)
    return probe


def test_the_static_lint_names_the_undefined_name_and_its_line() -> None:
    probe = _probe("lint_probe.py", VACUOUS)
    try:
        found = unresolved_names(probe)
    finally:
        probe.unlink()
    assert found == [UnresolvedName(line=5, name="math")]


def test_the_static_lint_accepts_parameters_comprehension_targets_lambdas_and_crosshair_names() -> None:
    text = '''
import math
LIMIT = 3


def f(xs: list[int], *rest: int, key: int = 0, **kw: int) -> int:
    """A function whose contracts use every kind of name the lint must accept.

    pre: all(x >= 0 for x in xs) and len(rest) < LIMIT and math.isfinite(key)
    post: __return__ == sum(map(lambda y: y, xs)) and kw == kw
    post[xs]: __old__.xs == xs and _ is None or True
    """
    return sum(xs)
'''
    probe = _probe("lint_ok_probe.py", text)
    try:
        assert unresolved_names(probe) == []
        text_with_typo = text.replace("len(rest)", "len(rset)")
        probe.write_text(text_with_typo)
        assert unresolved_names(probe) == [UnresolvedName(line=9, name="rset")]
    finally:
        probe.unlink()


def test_every_spec_contract_names_only_what_its_module_defines() -> None:
    """The deterministic half of the vacuity check, over the real spec (and the broken copies)."""
    modules = [*contract_modules(), *sorted((ROOT / "tests" / "crosshair_bugs").glob("broken_*.py"))]
    assert len(modules) >= 4
    for module in modules:
        assert unresolved_names(module) == [], module


def test_a_precondition_not_met_in_the_budget_is_retried_and_only_a_second_miss_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Regression: on a loaded CI machine CrossHair did not meet spec/file_store.py's two-key preconditions
    within 3 s and the report failed the module as vacuous.  The function is now checked again alone with a
    larger budget; only a second 'Unable' is an error.  CrossHair's answers are scripted here, so the test
    does not depend on the machine's speed."""
    probe = _probe("hard_precondition_probe.py", HARD_PRECONDITION)
    calls: list[tuple[str, float]] = []

    def scripted(answers: list[str]) -> Callable[[str, float], StepResult]:
        def fake(target: str, timeout: float) -> StepResult:
            calls.append((target, timeout))
            text = answers[len(calls) - 1]
            return StepResult(f"crosshair {target}", 0, 0.0, f"{probe}:{text}\n")

        return fake

    try:
        monkeypatch.setattr(
            verify,
            "_crosshair",
            scripted(["5: info: Unable to meet precondition.", "8: info: Not confirmed."]),
        )
        _, conditions = crosshair_check(probe, 3.0)
        assert calls == [
            (".verify/hard_precondition_probe.py", 3.0),
            (".verify/hard_precondition_probe.py:2", 30.0),
        ]
        assert [(c.line, c.verdict, c.clauses) for c in conditions] == [(8, "info", ["F1"])]

        calls.clear()
        monkeypatch.setattr(verify, "_crosshair", scripted(["5: info: Unable to meet precondition."] * 2))
        _, conditions = crosshair_check(probe, 3.0, retry_timeout=7.0)
        assert calls[1] == (".verify/hard_precondition_probe.py:2", 7.0)
        assert [(c.line, c.verdict) for c in conditions] == [(5, "error")]
        assert (
            conditions[0].message
            == "vacuous contract: Unable to meet precondition. (also with 7 s per condition)"
        )
    finally:
        probe.unlink()


@pytest.mark.verify_tier
def test_the_real_tool_meets_a_precondition_that_needs_time_on_the_retry() -> None:
    """The same path against real CrossHair: a first budget far too small, then the retry."""
    probe = _probe("hard_precondition_real_probe.py", HARD_PRECONDITION)
    try:
        step, conditions = crosshair_check(probe, 0.01, retry_timeout=6.0)
    finally:
        probe.unlink()
    assert [(c.line, c.verdict) for c in conditions] == [(8, "info")], step.output


BROKEN_DOUBLE = '''
def double(x: int) -> int:
    """M2: a deliberately broken double.

    post: __return__ == 2 * x
    post: __return__ >= x
    """
    return x + 1


def half(x: int) -> int:
    """A correct function beside the broken one: the bug check leaves it to the contract step.

    post: __return__ * 2 <= x
    """
    return x // 2
'''


def _bug_check(
    monkeypatch: pytest.MonkeyPatch, golden: str, answers: list[str]
) -> tuple[StepResult, list[tuple[str, float]]]:
    """``crosshair_bug_check`` on a probe of BROKEN_DOUBLE with scripted CrossHair answers (one per run; a
    line starting with a digit is a condition of the probe, any other line is printed as it is)."""
    probe = _probe("broken_double_probe.py", BROKEN_DOUBLE)
    expected = probe.with_suffix(".expected")
    expected.write_text(golden)
    calls: list[tuple[str, float]] = []

    def fake(target: str, timeout: float) -> StepResult:
        calls.append((target, timeout))
        lines = answers[len(calls) - 1].splitlines()
        text = "".join(f"{probe}:{line}\n" if line[:1].isdigit() else f"{line}\n" for line in lines)
        failed = ": error: " in text or "Traceback" in text
        return StepResult(f"crosshair {target}", 1 if failed else 0, 0.0, text)

    monkeypatch.setattr(verify, "_crosshair", fake)
    try:
        return verify.crosshair_bug_check(probe, 3.0), calls
    finally:
        probe.unlink()
        expected.unlink()


REFUTED_5 = "5: error: false when calling double(0) (which returns 1)"
REFUTED_6 = "6: error: false when calling double(-2) (which returns -1)"
NOT_CONFIRMED = "5: info: Not confirmed.\n6: info: Not confirmed."


def test_a_broken_model_refuted_at_more_lines_than_its_golden_ones_passes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Regression: at 10 s per condition CrossHair refuted lines 73 and 75 of the stale-birth model whose
    golden file lists 75, and the exact comparison failed the check."""
    step, calls = _bug_check(monkeypatch, "5: double post 1\n", [f"{REFUTED_5}\n{REFUTED_6}"])
    assert step.ok, step.output
    # only the function that owns the golden line (not ``half``), and nothing missing: no retry
    assert calls == [(".verify/broken_double_probe.py:2", 3.0)]
    assert step.output.startswith(
        "expected counterexamples at least at lines [5], CrossHair reported [5, 6]\n"
    )


def test_a_golden_line_missed_in_the_budget_is_retried_alone_with_a_larger_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Regression: under load CrossHair found no counterexample at 3 s per condition (twice), and the check
    failed although the model is broken.  CrossHair's answers are scripted: no dependence on speed."""
    step, calls = _bug_check(monkeypatch, "5: double post 1\n", [NOT_CONFIRMED, f"{REFUTED_5}\n6: info: ..."])
    assert step.ok, step.output
    assert calls == [(".verify/broken_double_probe.py:2", 3.0), (".verify/broken_double_probe.py:2", 30.0)]
    assert "-- retry of line 2 with 30 s per condition --" in step.output


def test_a_broken_model_that_was_fixed_fails_the_check_even_after_the_retry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The check must still be able to fail: a model CrossHair no longer refutes (the bug was fixed, or the
    golden line moved) is a failure once the larger budget found nothing either."""
    step, calls = _bug_check(monkeypatch, "5: double post 1\n6: double post 2\n", [NOT_CONFIRMED, REFUTED_6])
    assert not step.ok
    assert len(calls) == 2  # one retry for the one function, not one per missing line
    assert step.output.startswith(
        "expected counterexamples at least at lines [5, 6], CrossHair reported [6]\n"
    )


def test_an_unmet_precondition_is_not_a_refutation_and_an_empty_golden_file_never_passes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    unmet = "5: info: Unable to meet precondition.\n6: info: Not confirmed."
    step, _ = _bug_check(monkeypatch, "5: double post 1\n", [unmet, unmet, unmet])
    assert not step.ok, "a golden line that checked nothing counted as caught"
    step, _ = _bug_check(monkeypatch, "\n", [f"{REFUTED_5}\n{REFUTED_6}"])
    assert not step.ok, "an empty golden file can never fail, so it must not pass"
    step, calls = _bug_check(monkeypatch, "1: nothing\n5: double post 1\n", [REFUTED_5])
    assert not step.ok, "a golden line outside any function (a stale line number) was not a failure"
    assert "golden line 1 is outside any function" in step.output
    assert calls == [(".verify/broken_double_probe.py:2", 3.0)]


def test_production_argument_checks_are_crosshair_checked_under_b1() -> None:
    """hicache/_validate.py carries contracts; verify checks it with the specs and the report counts its
    contracts under B1 (each condition maps to the clause IDs of its function's docstring)."""
    validate = ROOT / "hicache" / "_validate.py"
    assert validate in contract_modules()
    assert not any(p.parent.name == "hicache" and p != validate for p in contract_modules())
    post_lines = [
        n for n, text in enumerate(validate.read_text().splitlines(), 1) if text.strip().startswith("post:")
    ]
    assert len(post_lines) >= 9
    by_line = verify._clauses_by_line(validate)
    assert all("B1" in by_line[n] for n in post_lines)
    assert unresolved_names(validate) == []


# The tail of what crosshair-tool 0.0.113 printed for hicache/_validate.py (exit status 1, no condition).
CROSSHAIR_CRASH = """Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/crosshair/libimpl/fractionlib.py", line 11, in _make_fraction
    force_true(d > 0)
  File "/venv/lib/python3.11/site-packages/crosshair/statespace.py", line 278, in force_true
    raise CrossHairInternal(
crosshair.util.CrossHairInternal: Attempted to call assert_true on a non-symbolic
"""
CRASHED = (
    "CrossHair failed: it crashed"
    " (crosshair.util.CrossHairInternal: Attempted to call assert_true on a non-symbolic)"
)


def _scripted(
    probe: Path, answers: list[tuple[int, str]], calls: list[str]
) -> Callable[[str, float], StepResult]:
    """A fake ``_crosshair``: an (exit status, output) per run; a line led by a digit is a condition."""

    def fake(target: str, timeout: float) -> StepResult:
        calls.append(target)
        status, text = answers[len(calls) - 1]
        output = "".join(
            f"{probe}:{line}\n" if line[:1].isdigit() else f"{line}\n" for line in text.splitlines()
        )
        return StepResult(f"crosshair {target}", status, 0.0, output)

    return fake


def test_a_crosshair_crash_is_an_error_under_the_module_s_clauses_never_a_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Regression: crosshair-tool 0.0.113 crashed on hicache/_validate.py (CrossHairInternal while making a
    symbolic Fraction) and printed no condition; only the exit status kept the step from passing, and the
    report showed the module's clauses as PASS.  The crash is now an error condition of its own."""
    probe = _probe("crash_probe.py", HARD_PRECONDITION)
    calls: list[str] = []
    try:
        monkeypatch.setattr(verify, "_crosshair", _scripted(probe, [(1, CROSSHAIR_CRASH)], calls))
        _, conditions = crosshair_check(probe, 3.0)
    finally:
        probe.unlink()
    assert calls == [".verify/crash_probe.py"]  # nothing to retry: the crash hid every answer
    assert [(c.line, c.clauses, c.verdict, c.message) for c in conditions] == [(0, ["F1"], "error", CRASHED)]


def test_a_run_that_reports_no_condition_checked_nothing_whatever_its_exit_status(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    probe = _probe("silent_probe.py", HARD_PRECONDITION)
    calls: list[str] = []
    answers = [(0, "WARNING: Targets found, but contain no checkable functions."), (2, "")]
    try:
        monkeypatch.setattr(verify, "_crosshair", _scripted(probe, answers, calls))
        _, quiet = crosshair_check(probe, 3.0)
        _, failed = crosshair_check(probe, 3.0)
    finally:
        probe.unlink()
    assert [(c.line, c.verdict, c.message) for c in quiet] == [
        (
            0,
            "error",
            "CrossHair failed: no condition reported, exit status 0"
            " (WARNING: Targets found, but contain no checkable functions.)",
        )
    ]
    assert [c.message for c in failed] == [
        "CrossHair failed: no condition reported, exit status 2 (no output)"
    ]


def test_a_retry_that_crashes_is_an_error_and_the_unmet_precondition_stays_vacuous(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before, a crashed retry replaced the function's answers by none: its contracts vanished, and passed."""
    probe = _probe("retry_crash_probe.py", HARD_PRECONDITION)
    calls: list[str] = []
    answers = [(0, "5: info: Unable to meet precondition."), (1, CROSSHAIR_CRASH)]
    try:
        monkeypatch.setattr(verify, "_crosshair", _scripted(probe, answers, calls))
        _, conditions = crosshair_check(probe, 3.0, retry_timeout=7.0)
    finally:
        probe.unlink()
    assert calls == [".verify/retry_crash_probe.py", ".verify/retry_crash_probe.py:2"]
    assert [(c.line, c.clauses, c.verdict, c.message) for c in conditions] == [
        (2, ["F1"], "error", f"{CRASHED} (retry of line 2)"),
        (5, ["F1"], "error", "vacuous contract: Unable to meet precondition."),
    ]


def test_a_crash_fails_the_broken_model_check_even_when_another_run_refuted_the_golden_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A crash is not a counterexample, and a check that crashed did not show that the checker works."""
    step, calls = _bug_check(monkeypatch, "5: double post 1\n", [CROSSHAIR_CRASH, REFUTED_5])
    assert not step.ok
    assert len(calls) == 2  # the crash refuted nothing, so line 5's function was retried (and refuted)
    assert step.output.startswith(
        "expected counterexamples at least at lines [5], CrossHair reported [5]\n"
        f"{CRASHED} (check of line 2)\n"
    )
    step, _ = _bug_check(monkeypatch, "5: double post 1\n6: double post 2\n", [REFUTED_6, CROSSHAIR_CRASH])
    assert not step.ok
    assert f"{CRASHED} (retry of line 2)\n" in step.output
