"""``make verify``: every machine check of the project, then the conformance report.

Steps (each is recorded, none stops the others; all start at once and share the cores, and
the suite itself is split over pytest-xdist workers, ``--jobs``):

1. ``ruff check`` and ``mypy --strict`` over the code;
2. the whole pytest suite under the ``verify`` Hypothesis profile, over ``--jobs`` workers, writing
   per-test clause coverage (``spec.pytest_plugin``);
3. ``crosshair check`` on every module that carries PEP 316 contracts
   (discovered: any ``spec/*.py`` or ``hicache/*.py`` with a ``post:`` line:
   the specs, and production's argument checks); a contract that
   names something its module does not define is an error (decided
   statically, ``spec.contract_names``), and one whose precondition CrossHair
   could not meet in time is checked again alone with a larger budget before
   it counts as vacuous; a CrossHair run that crashed (a traceback, e.g.
   ``CrossHairInternal``) or reported no condition at all is an error;
4. ``crosshair check`` on every deliberately broken model in
   ``tests/crosshair_bugs/``: each must yield at least the counterexamples
   listed in its ``.expected`` golden file (the checker is shown to fail); a
   golden line missed under load is checked again with a larger budget; a
   run that crashed or reported nothing fails the check;
5. the bounded exhaustive model check of every component
   (``python -m spec.modelcheck``) and real-thread linearizability runs
   (``python -m spec.linearizability``);
6. the report (``spec.report``): per component and clause, which checks
   covered it, with their figures, and PASS / FAIL / UNCHECKED; then the
   model-check table, the linearizability runs and the last mutation score
   recorded by ``make mutation`` (``docs/mutation-score.json``).

Exit status 0 only when every step passed.  ``--quick`` uses the ``dev``
profile and short CrossHair budgets (for iterating on the report itself).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from spec.contract_names import UnresolvedName, function_lines, unresolved_names
from spec.report import CrosshairCondition, StepResult, render_report

__all__ = ["main"]

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / ".verify"
MUTATION_SCORE = ROOT / "docs" / "mutation-score.json"  # written by `make mutation`
CLAUSE_RE = re.compile(r"\b([MEPFVCB][1-9])\b")
LINE_RE = re.compile(r"^(?P<path>.+?):(?P<line>\d+): (?P<kind>info|error): (?P<message>.*)$")


def _run(name: str, argv: list[str], env: dict[str, str] | None = None) -> StepResult:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env={**os.environ, **(env or {})})
    seconds = time.perf_counter() - start
    output = proc.stdout + proc.stderr
    return StepResult(name, proc.returncode, seconds, output)


def _tool(module: str) -> list[str]:
    return [sys.executable, "-m", module]


def contract_modules() -> list[Path]:
    """The modules that carry PEP 316 contracts: the specs, and the production modules that have them.

    In ``hicache/`` only the pure argument checks (``hicache/_validate.py``) do; the classes are checked by
    refinement against the spec instead (see the docstring of ``hicache/metadata_cache.py``).
    """
    found = [*(ROOT / "spec").glob("*.py"), *(ROOT / "hicache").glob("*.py")]
    return sorted(p for p in found if re.search(r"^\s+post:", p.read_text(), re.M))


def _clauses_by_line(path: Path) -> dict[int, list[str]]:
    """Map each docstring line of each function to the clause IDs its docstring names."""
    tree = ast.parse(path.read_text())
    mapping: dict[int, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node) or ""
            ids = sorted(set(CLAUSE_RE.findall(doc)))
            body0 = node.body[0] if node.body else None
            if body0 is not None and body0.end_lineno is not None:
                for line in range(body0.lineno, body0.end_lineno + 1):
                    mapping[line] = ids
    return mapping


UNMET = "Unable to meet precondition"
CRASH = "Traceback (most recent call last):"
TOOL_FAILURE = "CrossHair failed"  # the message of a run that checked nothing to be trusted
CONTRACT_RE = re.compile(r"^\s+(?:pre|post|raises)(?:\[[^\]]*\])?:")


def _crosshair(target: str, timeout: float) -> StepResult:
    return _run(
        f"crosshair {target}",
        [
            sys.executable,
            "-m",
            "crosshair",
            "check",
            "--analysis_kind=PEP316",
            f"--per_condition_timeout={timeout}",
            "--report_all",
            str(ROOT / target),
        ],
    )


def _parse_conditions(path: Path, output: str, by_line: dict[int, list[str]]) -> list[CrosshairCondition]:
    conditions = []
    for raw in output.splitlines():
        m = LINE_RE.match(raw.strip())
        if m:
            line = int(m["line"])
            conditions.append(
                CrosshairCondition(
                    path=str(path.relative_to(ROOT)),
                    line=line,
                    clauses=by_line.get(line, []),
                    verdict=m["kind"],
                    message=m["message"],
                )
            )
    return conditions


def _tool_failure(step: StepResult, conditions: list[CrosshairCondition]) -> str | None:
    """Why a CrossHair run must not count as a check, or None when it may.

    A traceback in its output is a crash (``CrossHairInternal`` included): CrossHair stops at the first
    one and prints none of the conditions it had already judged, so its exit status alone (1, as for a
    counterexample) does not tell it apart.  A run that reported no condition at all checked nothing,
    whatever its exit status (the module did not load, or the target holds no checkable function).
    """
    lines = [line.strip() for line in step.output.splitlines() if line.strip()]
    last = (lines[-1] if lines else "no output")[:200]
    if CRASH in step.output:
        return f"{TOOL_FAILURE}: it crashed ({last})"
    if not conditions:
        return f"{TOOL_FAILURE}: no condition reported, exit status {step.returncode} ({last})"
    return None


def _contract_clauses(
    path: Path, by_line: dict[int, list[str]], owner: dict[int, int], fn: int | None = None
) -> list[str]:
    """The clause IDs of the functions of ``path`` with contracts (of function ``fn`` alone, if given)."""
    lines = [n for n, text in enumerate(path.read_text().splitlines(), 1) if CONTRACT_RE.match(text)]
    return sorted({c for n in lines if fn is None or owner.get(n) == fn for c in by_line.get(n, [])})


def _retry_budget(timeout: float, retry_timeout: float | None) -> float:
    """Seconds per condition when a function is checked again alone: ``max(10 x timeout, 20 s)``."""
    return retry_timeout if retry_timeout is not None else max(10 * timeout, 20.0)


def crosshair_check(
    path: Path, timeout: float, retry_timeout: float | None = None
) -> tuple[StepResult, list[CrosshairCondition]]:
    """CrossHair's verdict on every contract of ``path``; no condition passes that checked nothing.

    ``Unable to meet precondition`` has two causes.  A contract that names something the module does
    not define (``spec.contract_names``) can never be met: an error, decided statically.  Otherwise
    CrossHair may simply not have found an input in ``timeout`` seconds on a loaded machine (two keys and
    two namespaces with five preconditions need a few seconds): that function alone is checked again
    with ``retry_timeout`` per condition (default ``max(10 * timeout, 20)``), and only a second
    ``Unable`` is an error.

    A run that crashed or reported no condition (``_tool_failure``) is an error too, never a pass: at
    line 0 with the clauses of every contract of the module for the whole run, at the function's line
    for a retry.
    """
    rel = str(path.relative_to(ROOT))
    step = _crosshair(rel, timeout)
    owner = function_lines(path)  # the def line of each line's function (0: outside any)
    clauses = _clauses_by_line(path)
    first = _parse_conditions(path, step.output, clauses)
    failures: list[CrosshairCondition] = []
    why = _tool_failure(step, first)
    if why is not None:
        failures.append(CrosshairCondition(rel, 0, _contract_clauses(path, clauses, owner), "error", why))
    by_function: dict[int, list[CrosshairCondition]] = {}
    for c in first:
        by_function.setdefault(owner.get(c.line, 0), []).append(c)
    unresolved: dict[int, list[UnresolvedName]] = {}
    for u in unresolved_names(path):
        unresolved.setdefault(owner.get(u.line, 0), []).append(u)
    retry = _retry_budget(timeout, retry_timeout)
    for fn, group in list(by_function.items()):
        if fn not in unresolved and any(UNMET in c.message for c in group):
            again = _crosshair(f"{rel}:{fn}", retry)
            output = f"{step.output}-- retry of line {fn} with {retry:g} s per condition --\n{again.output}"
            step = StepResult(step.name, step.returncode, step.seconds + again.seconds, output)
            again_conditions = _parse_conditions(path, again.output, clauses)
            why = _tool_failure(again, again_conditions)
            if why is not None:  # keep the first run's answers (an unmet precondition stays vacuous)
                fn_clauses = _contract_clauses(path, clauses, owner, fn)
                failures.append(
                    CrosshairCondition(rel, fn, fn_clauses, "error", f"{why} (retry of line {fn})")
                )
                continue
            by_function[fn] = [
                replace(c, message=f"{c.message} (also with {retry:g} s per condition)")
                if UNMET in c.message
                else c
                for c in again_conditions
            ]
    for fn, names in unresolved.items():
        by_function[fn] = [
            CrosshairCondition(
                rel,
                u.line,
                clauses.get(u.line, []),
                "error",
                f"vacuous contract: it names {u.name!r}, which the module does not define",
            )
            for u in names
        ]
    final = [c for group in by_function.values() for c in group]
    final = [
        replace(c, verdict="error", message=f"vacuous contract: {c.message}") if UNMET in c.message else c
        for c in final
    ]
    return step, sorted(final + failures, key=lambda c: c.line)


def _golden_lines(path: Path) -> list[int]:
    golden = path.with_suffix(".expected")
    return sorted(int(line.split(":")[0]) for line in golden.read_text().splitlines() if line.strip())


def _refuted(conditions: list[CrosshairCondition]) -> set[int]:
    """The lines of the conditions CrossHair refuted (an unmet precondition, a failed run refute nothing)."""
    return {
        c.line
        for c in conditions
        if c.verdict == "error" and not c.message.startswith(("vacuous", TOOL_FAILURE))
    }


def crosshair_bug_check(path: Path, timeout: float, retry_timeout: float | None = None) -> StepResult:
    """A broken model must be refuted at least at every line of its golden ``.expected`` file.

    Only the functions that own a golden line are checked (``file.py:LINE`` targets): the rest of a broken
    copy is the spec module as it is, whose contracts the contract step checks already, so checking them
    here again was work done twice (most of the step's time).  More refutations than the golden lines
    are fine (a broken function may break several contracts; the golden file lists those found
    reliably).  Whether CrossHair finds a counterexample within ``timeout`` depends on the machine (under
    load it found none at 3 s per condition), so a function with a golden line CrossHair did not refute
    is checked again alone with ``retry_timeout`` per condition (default ``max(10 * timeout, 20)``, as
    for unmet preconditions); a golden line that is still not refuted fails the check, and so does an
    empty golden file (it could never fail), a golden line outside any function, and any run that
    crashed or reported no condition (``_tool_failure``), even if the golden lines were refuted by
    another run.
    """
    rel = str(path.relative_to(ROOT))
    want = _golden_lines(path)
    owner = function_lines(path)
    functions = sorted({owner.get(line, 0) for line in want})
    failures = [f"golden line {line} is outside any function" for line in want if owner.get(line, 0) == 0]
    got: set[int] = set()
    output, seconds = "", 0.0

    def run(fn: int, budget: float, label: str) -> None:
        nonlocal output, seconds
        step = _crosshair(f"{rel}:{fn}", budget)
        output += f"-- {label} of line {fn} with {budget:g} s per condition --\n{step.output}"
        seconds += step.seconds
        conditions = _parse_conditions(path, step.output, {})
        why = _tool_failure(step, conditions)
        if why is not None:
            failures.append(f"{why} ({label} of line {fn})")
        got.update(_refuted(conditions))

    for fn in functions:
        if fn:
            run(fn, timeout, "check")
    retry = _retry_budget(timeout, retry_timeout)
    for fn in sorted({owner.get(line, 0) for line in want if line not in got}):
        if fn:
            run(fn, retry, "retry")
    ok = bool(want) and set(want) <= got and not failures
    detail = f"expected counterexamples at least at lines {want}, CrossHair reported {sorted(got)}\n"
    detail += "".join(f"{failure}\n" for failure in failures)
    return StepResult(f"crosshair catches {rel}", 0 if ok else 1, seconds, detail + output)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spec.verify", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="dev profile, short CrossHair budget")
    parser.add_argument("--crosshair-timeout", type=float, default=None)
    parser.add_argument(
        "--jobs",
        default="auto",
        help="pytest-xdist workers for the test suite: a number, or 'auto' for one per core (default);"
        " 0 runs the suite in this process's one pytest",
    )
    budget = parser.add_argument_group("budget (the knobs of a larger or distributed run, docs/VERIFY.md)")
    budget.add_argument("--max-examples", type=int, default=None, help="examples per property (verify: 1500)")
    budget.add_argument("--steps", type=int, default=None, help="steps per stateful example (verify: 60)")
    budget.add_argument("--modelcheck-depth", type=int, default=None, help="model-check depth bound")
    budget.add_argument("--modelcheck-wide", action="store_true", help="the model checker's larger domains")
    args = parser.parse_args(argv)
    timeout = args.crosshair_timeout or (1.0 if args.quick else 3.0)
    knobs = {
        name: str(value)
        for name, value in (
            ("HICACHE_VERIFY_EXAMPLES", args.max_examples),
            ("HICACHE_VERIFY_STEPS", args.steps),
        )
        if value is not None
    }
    modelcheck_args = [
        *(["--depth", str(args.modelcheck_depth)] if args.modelcheck_depth is not None else []),
        *(["--wide"] if args.modelcheck_wide else []),
    ]
    profile = "dev" if args.quick else "verify"
    OUT.mkdir(exist_ok=True)
    results_json = OUT / "pytest.json"
    modelcheck_json, lin_json = OUT / "modelcheck.json", OUT / "linearizability.json"
    for stale in (results_json, modelcheck_json, lin_json):
        stale.unlink(missing_ok=True)
    steps: list[StepResult] = []
    started = time.perf_counter()

    def say(step: StepResult) -> None:
        mark = "ok  " if step.ok else "FAIL"
        print(f"[{mark}] {step.name} ({step.seconds:.1f}s)", flush=True)
        if not step.ok:
            print(step.output[-4000:], flush=True)
        steps.append(step)

    print(f"== make verify: lint, types, tests ({args.jobs} workers), contracts, report", flush=True)
    crosshair_conditions: list[CrosshairCondition] = []
    bug_models = sorted((ROOT / "tests" / "crosshair_bugs").glob("*.py"))
    bug_models = [p for p in bug_models if p.with_suffix(".expected").exists()]
    # Every step is its own process and none reads another's output, so all of them start at once and
    # share the cores: the wall time is about the total work over the cores, not the sum of the steps.
    # The pytest step is the largest; its workers (pytest-xdist) split it.  CrossHair's budget is CPU time
    # per condition (``--per_condition_timeout`` counts process CPU seconds), so sharing the cores does
    # not shorten its exploration; two lanes keep at most two CrossHair processes beside the workers.
    # Results are printed in a fixed order, whatever order the steps end in.
    with ThreadPoolExecutor(max_workers=6) as pool, ThreadPoolExecutor(max_workers=2) as lanes:
        tests = pool.submit(
            _run,
            f"pytest (Hypothesis profile {profile!r}, {args.jobs} workers)",
            [
                *_tool("pytest"),
                "-n",
                str(args.jobs),
                "--dist",
                "worksteal",  # an idle worker takes tests queued for a busy one: the long machines spread
                f"--conformance-json={results_json}",
                "-p",
                "no:cacheprovider",
            ],
            {"HYPOTHESIS_PROFILE": profile, **knobs},
        )
        lint = pool.submit(_run, "ruff check", [*_tool("ruff"), "check", "."])
        types = pool.submit(_run, "mypy --strict", _tool("mypy"))
        model_jobs = [lanes.submit(crosshair_check, p, timeout) for p in contract_modules()]
        bug_jobs = [lanes.submit(crosshair_bug_check, p, timeout) for p in bug_models]
        # Exhaustive bounded model checking (CI-sized domains), real-thread linearizability runs, and the
        # last mutation score recorded by `make mutation` (read, not re-run).
        modelcheck = pool.submit(
            _run, "model check", [*_tool("spec.modelcheck"), *modelcheck_args, "--json", str(modelcheck_json)]
        )
        linearizability = pool.submit(
            _run, "linearizability", [*_tool("spec.linearizability"), "--json", str(lin_json)]
        )
        say(lint.result())
        say(types.result())
        say(tests.result())
        for job in model_jobs:
            step, conditions = job.result()
            failed = [c for c in conditions if c.verdict == "error"]
            say(
                StepResult(
                    step.name, 1 if failed or step.returncode not in (0,) else 0, step.seconds, step.output
                )
            )
            crosshair_conditions.extend(conditions)
        for bug_job in bug_jobs:
            say(bug_job.result())
        say(modelcheck.result())
        say(linearizability.result())
    extras = {
        "modelcheck": json.loads(modelcheck_json.read_text()) if modelcheck_json.exists() else [],
        "linearizability": json.loads(lin_json.read_text()) if lin_json.exists() else [],
        "mutation": json.loads(MUTATION_SCORE.read_text()) if MUTATION_SCORE.exists() else None,
    }

    records: list[dict[str, Any]] = json.loads(results_json.read_text()) if results_json.exists() else []
    report, ok = render_report(records, crosshair_conditions, steps, time.perf_counter() - started, **extras)
    print(report)
    (OUT / "report.txt").write_text(report)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
