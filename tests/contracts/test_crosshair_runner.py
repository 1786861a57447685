"""The CrossHair tests cannot pass a contract that checked nothing, nor a broken variant not refuted.

CrossHair's answers are scripted here (``crosshair_runner.RUN``), so these tests do not depend on the
machine's speed; the two marked ``verify_tier`` run the real tool.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from spec.conformance.contract_names import UnresolvedName, unresolved_names
from tests.contracts import crosshair_runner as runner
from tests.contracts import test_crosshair
from tests.contracts.crosshair_runner import ROOT, Condition, ContractFunction

VACUOUS = '''
def double(x: int) -> int:
    """M2: a contract whose precondition names a module that was never imported.

    pre: math.isfinite(x)
    post: __return__ == 2 * x
    """
    return 2 * x
'''

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
POST_8 = "same | post: not __return__ or key == other"

BROKEN_DOUBLE = '''
def double(x: int) -> int:
    """M2: a deliberately broken double.

    post: __return__ == 2 * x
    post: __return__ >= x
    """
    return x + 1
'''
POST_5 = "double | post: __return__ == 2 * x"
POST_6 = "double | post: __return__ >= x"
REFUTED_5 = "5: error: false when calling double(0) (which returns 1)"
REFUTED_6 = "6: error: false when calling double(-2) (which returns -1)"
NOT_CONFIRMED = "5: info: Not confirmed.\n6: info: Not confirmed."

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


@pytest.fixture
def probe(request: pytest.FixtureRequest) -> Iterator[Callable[..., Path]]:
    """Write a probe module under ``.verify/`` (and its golden file, if any); both are removed after."""
    made: list[Path] = []

    def write(text: str, golden: str | None = None) -> Path:
        path = ROOT / ".verify" / f"{request.node.name[:40]}_{len(made)}_probe.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        made.append(path)
        if golden is not None:
            path.with_suffix(".expected").write_text(golden)
            made.append(path.with_suffix(".expected"))
        return path

    yield write
    for path in made:
        path.unlink()


def _script(
    monkeypatch: pytest.MonkeyPatch, path: Path, answers: list[tuple[int, str]]
) -> list[tuple[str, float]]:
    """Script CrossHair: an (exit status, output) per run; a line led by a digit is a condition of
    ``path`` (printed as CrossHair does, ``path:LINE: ...``).  Returns the (target, budget) of each run."""
    calls: list[tuple[str, float]] = []

    def fake(target: str, timeout: float) -> tuple[int, str]:
        calls.append((target, timeout))
        status, text = answers[len(calls) - 1]
        lines = text.splitlines()
        return status, "".join(f"{path}:{line}\n" if line[:1].isdigit() else f"{line}\n" for line in lines)

    monkeypatch.setattr(runner, "RUN", fake)
    return calls


def _only(path: Path) -> ContractFunction:
    (fn,) = runner.contract_functions([path])
    return fn


def test_a_contract_whose_precondition_cannot_be_met_is_reported_as_a_failure(
    probe: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: ruff removed ``import math`` (used only in docstrings) from the spec, and CrossHair
    answered 'Unable to meet precondition' for every contract, which the report counted as held.  The
    static lint decides it: CrossHair is not even asked."""
    path = probe(VACUOUS)
    calls = _script(monkeypatch, path, [])
    fn = _only(path)
    verdict = runner.check(fn)
    assert calls == []
    assert fn.clauses == ("M2",)
    assert [(c.name, c.verdict) for c in verdict.conditions] == [("double | pre: math.isfinite(x)", "error")]
    assert (
        verdict.conditions[0].message == "vacuous contract: it names 'math', which the module does not define"
    )


def test_the_static_lint_names_the_undefined_name_and_its_line(probe: Callable[..., Path]) -> None:
    assert unresolved_names(probe(VACUOUS)) == [UnresolvedName(line=5, name="math")]


def test_the_static_lint_accepts_parameters_comprehension_targets_lambdas_and_crosshair_names(
    probe: Callable[..., Path],
) -> None:
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
    path = probe(text)
    assert unresolved_names(path) == []
    path.write_text(text.replace("len(rest)", "len(rset)"))
    assert unresolved_names(path) == [UnresolvedName(line=9, name="rset")]


def test_every_contract_and_every_broken_variant_names_only_what_its_module_defines() -> None:
    """The deterministic half of the vacuity check, over the real specs and the broken variants."""
    modules = [*runner.contract_modules(), *runner.variants()]
    assert len(modules) >= 8
    for module in modules:
        assert unresolved_names(module) == [], module


def test_every_contract_function_is_found_with_its_clauses() -> None:
    """One CrossHair test per function with a ``post:``; each is tagged with its docstring's clauses."""
    found = {fn.id: fn.clauses for fn in runner.contract_functions()}
    assert len(found) >= 28
    assert found["spec.models.metadata_cache.is_live"] == ("M2",)
    assert found["spec.models.metadata_cache.add"] == ("M3", "M6", "M6-lru")
    assert found["spec.models.file_names.cap_pass"] == ("S7", "V3", "V5", "V6")  # S7: its docstring names it
    assert all(found.values()), [name for name, clauses in found.items() if not clauses]


def test_a_precondition_not_met_in_the_budget_is_retried_and_only_a_second_miss_fails(
    probe: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: on a loaded CI machine CrossHair did not meet
    spec/models/file_store.py's two-key preconditions
    within 3 s and the report failed the module as vacuous.  The function is now checked again with a
    larger budget; only a second 'Unable' is an error."""
    path = probe(HARD_PRECONDITION)
    target = f".verify/{path.name}:2"
    calls = _script(
        monkeypatch, path, [(0, "8: info: Unable to meet precondition."), (0, "8: info: Not confirmed.")]
    )
    verdict = runner.check(_only(path), 3.0)
    assert calls == [(target, 3.0), (target, 30.0)]
    assert [(c.name, c.verdict) for c in verdict.conditions] == [(POST_8, "info")]

    calls = _script(monkeypatch, path, [(0, "8: info: Unable to meet precondition.")] * 2)
    verdict = runner.check(_only(path), 3.0, retry_timeout=7.0)
    assert calls[1] == (target, 7.0)
    assert [(c.name, c.verdict, c.message) for c in verdict.conditions] == [
        (POST_8, "error", "vacuous contract: Unable to meet precondition. (also with 7 s per condition)")
    ]


@pytest.mark.verify_tier
def test_the_real_tool_meets_a_precondition_that_needs_time_on_the_retry(probe: Callable[..., Path]) -> None:
    """The same path against real CrossHair: a first budget far too small, then the retry."""
    path = probe(HARD_PRECONDITION)
    verdict = runner.check(_only(path), 0.01, retry_timeout=6.0)
    assert [(c.name, c.verdict) for c in verdict.conditions] == [(POST_8, "info")], verdict.output


def test_a_crosshair_crash_is_an_error_never_a_pass(
    probe: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: crosshair-tool 0.0.113 crashed on hicache/_validate.py (CrossHairInternal while making a
    symbolic Fraction) and printed no condition; only the exit status kept the step from passing, and the
    report showed the module's clauses as PASS.  The crash is now an error condition of its own."""
    path = probe(HARD_PRECONDITION)
    calls = _script(monkeypatch, path, [(1, CROSSHAIR_CRASH)])
    verdict = runner.check(_only(path), 3.0)
    assert len(calls) == 1  # nothing to retry: the crash hid every answer
    assert [(c.name, c.verdict, c.message) for c in verdict.conditions] == [
        (f"same | {runner.WHOLE_RUN}", "error", CRASHED)
    ]


def test_a_run_that_reports_no_condition_checked_nothing_whatever_its_exit_status(
    probe: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = probe(HARD_PRECONDITION)
    _script(monkeypatch, path, [(0, "WARNING: Targets found, but contain no checkable functions."), (2, "")])
    quiet, failed = runner.check(_only(path)), runner.check(_only(path))
    assert [c.message for c in quiet.failed] == [
        "CrossHair failed: no condition reported, exit status 0"
        " (WARNING: Targets found, but contain no checkable functions.)"
    ]
    assert [c.message for c in failed.failed] == [
        "CrossHair failed: no condition reported, exit status 2 (no output)"
    ]


def test_a_retry_that_crashes_is_an_error_and_the_unmet_precondition_stays_vacuous(
    probe: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, a crashed retry replaced the function's answers by none: its contracts vanished, and passed."""
    path = probe(HARD_PRECONDITION)
    _script(monkeypatch, path, [(0, "8: info: Unable to meet precondition."), (1, CROSSHAIR_CRASH)])
    verdict = runner.check(_only(path), 3.0, retry_timeout=7.0)
    assert [(c.name, c.verdict, c.message) for c in verdict.conditions] == [
        (POST_8, "error", "vacuous contract: Unable to meet precondition."),
        (f"same | {runner.WHOLE_RUN}", "error", f"{CRASHED} (retry)"),
    ]


def test_crosshair_s_output_is_named_by_function_and_condition_without_path_or_line(
    probe: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = probe(BROKEN_DOUBLE, POST_5 + "\n")
    _script(monkeypatch, path, [(1, f"{REFUTED_5}\n6: info: Not confirmed.")])
    verdict = runner.check(_only(path))
    assert verdict.conditions == [
        Condition(
            "double", "post: __return__ == 2 * x", "error", "false when calling double(0) (which returns 1)"
        ),
        Condition("double", "post: __return__ >= x", "info", "Not confirmed."),
    ]
    assert runner.golden(path) == [POST_5]


def _catch(
    monkeypatch: pytest.MonkeyPatch, probe: Callable[..., Path], golden: str, answers: list[str]
) -> tuple[runner.Caught, list[tuple[str, float]]]:
    path = probe(BROKEN_DOUBLE, golden)
    calls = _script(monkeypatch, path, [(1 if "error" in a or "Traceback" in a else 0, a) for a in answers])
    return runner.catch(path, 3.0), calls


def test_a_broken_variant_refuted_at_more_conditions_than_its_golden_ones_passes(
    probe: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: at 10 s per condition CrossHair refuted two conditions of the stale-birth model whose
    golden file lists one, and the exact comparison failed the check."""
    caught, calls = _catch(monkeypatch, probe, f"{POST_5}\n", [f"{REFUTED_5}\n{REFUTED_6}"])
    assert caught.ok, caught.detail()
    assert len(calls) == 1  # nothing missing: no retry
    assert caught.refuted == {POST_5, POST_6}


def test_a_golden_condition_missed_in_the_budget_is_retried_with_a_larger_one(
    probe: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: under load CrossHair found no counterexample at 3 s per condition, and the check failed
    although the model is broken."""
    caught, calls = _catch(monkeypatch, probe, f"{POST_5}\n", [NOT_CONFIRMED, f"{REFUTED_5}\n6: info: ..."])
    assert caught.ok, caught.detail()
    assert [budget for _target, budget in calls] == [3.0, 30.0]
    assert "-- retry with 30 s per condition --" in caught.output


def test_a_broken_variant_that_was_fixed_fails_and_the_missed_golden_condition_is_named(
    probe: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check must be able to fail: a variant CrossHair no longer refutes where the golden file says is
    a failure once the larger budget found nothing either, and the report names what was missed."""
    caught, calls = _catch(monkeypatch, probe, f"{POST_5}\n{POST_6}\n", [NOT_CONFIRMED, REFUTED_6])
    assert not caught.ok
    assert len(calls) == 2
    assert f"not refuted: {POST_5}" in caught.detail()
    assert f"not refuted: {POST_6}" not in caught.detail()


def test_an_unmet_precondition_is_not_a_refutation_and_an_empty_or_stale_golden_file_never_passes(
    probe: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    unmet = "5: info: Unable to meet precondition.\n6: info: Not confirmed."
    caught, _ = _catch(monkeypatch, probe, f"{POST_5}\n", [unmet, unmet])
    assert not caught.ok, "a golden condition that checked nothing counted as caught"
    caught, _ = _catch(monkeypatch, probe, "\n", [f"{REFUTED_5}\n{REFUTED_6}"])
    assert not caught.ok, "an empty golden file can never fail, so it must not pass"
    stale = "double | post: __return__ == 3 * x"
    caught, _ = _catch(monkeypatch, probe, f"{stale}\n{POST_5}\n", [REFUTED_5, REFUTED_5])
    assert not caught.ok, "a golden condition the variant no longer holds was not a failure"
    assert "golden condition not in " in caught.detail() and stale in caught.detail()


def test_a_crash_fails_the_variant_check_even_when_another_run_refuted_the_golden_conditions(
    probe: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash is not a counterexample, and a check that crashed did not show that the checker works."""
    caught, calls = _catch(monkeypatch, probe, f"{POST_5}\n", [CROSSHAIR_CRASH, REFUTED_5])
    assert not caught.ok
    assert len(calls) == 2  # the crash refuted nothing, so the variant was checked again (and refuted)
    assert f"{CRASHED} (check)" in caught.detail()


def test_each_golden_file_names_a_condition_of_its_variant_that_breaks_a_model_function() -> None:
    """A golden line is ``function | condition`` of its variant, and each variant's function is a broken
    form of the model function of the same name (so it cannot drift away from what it breaks)."""
    found = runner.variants()
    assert len(found) >= 3
    for path in found:
        want = runner.golden(path)
        assert want, f"{path.name}: empty golden file"
        held = {c.name for fn in runner.contract_functions([path]) for c in runner.declared(fn)}
        assert set(want) <= held, (path.name, set(want) - held)
        module = importlib.import_module(f"spec.variants.crosshair.{path.stem}")
        for fn in runner.contract_functions([path]):
            assert fn.clauses, f"{path.name}: {fn.name} names no clause"
            model = {"F": "spec.models.file_names"}.get(fn.clauses[0][0], "spec.models.metadata_cache")
            assert callable(getattr(importlib.import_module(model), fn.name)), (path.name, fn.name, model)
            assert getattr(module, fn.name).__module__ == module.__name__


def test_the_variant_test_fails_when_a_bug_yields_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pytest test itself, with CrossHair scripted to refute nothing: it fails, naming the golden
    condition it missed."""
    variant = next(p for p in runner.variants() if p.stem == "exclusive_ttl_boundary")
    posts = [
        n for n, line in enumerate(variant.read_text().splitlines(), 1) if line.strip().startswith("post:")
    ]
    _script(monkeypatch, variant, [(0, "\n".join(f"{n}: info: Not confirmed." for n in posts))] * 2)
    with pytest.raises(AssertionError, match=r"not refuted: is_live \| post: \(now != birth\) or __return__"):
        test_crosshair.test_crosshair_refutes_each_broken_variant(variant, lambda name, value: None)


def test_production_argument_checks_are_crosshair_checked_under_b1() -> None:
    """hicache/_validate.py carries contracts; its CrossHair tests are tagged B1 (the clause IDs of each
    function's docstring), and no other production module is checked."""
    validate = ROOT / "hicache" / "_validate.py"
    assert validate in runner.contract_modules()
    assert not any(p.parent.name == "hicache" and p != validate for p in runner.contract_modules())
    functions = runner.contract_functions([validate])
    assert len(functions) >= 3
    assert all("B1" in fn.clauses for fn in functions)
    posts = sum(len([c for c in runner.declared(fn) if c.text.startswith("post")]) for fn in functions)
    assert posts >= 9
