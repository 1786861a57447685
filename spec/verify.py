"""``make verify``: every machine check of the project, then the conformance report.

Steps (each is recorded, none stops the others):

1. ``ruff check`` and ``mypy --strict`` over the code;
2. the whole pytest suite under the ``verify`` Hypothesis profile, writing
   per-test clause coverage (``spec.pytest_plugin``);
3. ``crosshair check`` on every spec module that carries PEP 316 contracts
   (discovered: any ``spec/*.py`` with a ``post:`` line);
4. ``crosshair check`` on every deliberately broken model in
   ``tests/crosshair_bugs/``: each must yield exactly the counterexamples
   listed in its ``.expected`` golden file (the checker is shown to fail);
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
from pathlib import Path
from typing import Any

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
    """The spec modules that carry PEP 316 contracts."""
    return sorted(p for p in (ROOT / "spec").glob("*.py") if re.search(r"^\s+post:", p.read_text(), re.M))


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


def crosshair_check(path: Path, timeout: float) -> tuple[StepResult, list[CrosshairCondition]]:
    step = _run(
        f"crosshair {path.relative_to(ROOT)}",
        [
            sys.executable,
            "-m",
            "crosshair",
            "check",
            "--analysis_kind=PEP316",
            f"--per_condition_timeout={timeout}",
            "--report_all",
            str(path),
        ],
    )
    by_line = _clauses_by_line(path)
    conditions = []
    for raw in step.output.splitlines():
        m = LINE_RE.match(raw.strip())
        if not m:
            continue
        line = int(m["line"])
        verdict, message = m["kind"], m["message"]
        if "Unable to meet precondition" in message:
            # A contract whose precondition can never hold checks nothing (e.g. a name the
            # docstring uses was not imported): that is a failure, not a pass.
            verdict, message = "error", f"vacuous contract: {message}"
        conditions.append(
            CrosshairCondition(
                path=str(path.relative_to(ROOT)),
                line=line,
                clauses=by_line.get(line, []),
                verdict=verdict,
                message=message,
            )
        )
    return step, conditions


def crosshair_bug_check(path: Path, timeout: float) -> StepResult:
    """A broken model must produce exactly the golden counterexamples (by line number)."""
    step, conditions = crosshair_check(path, timeout)
    golden = path.with_suffix(".expected")
    want = sorted(int(line.split(":")[0]) for line in golden.read_text().splitlines() if line.strip())
    got = sorted(c.line for c in conditions if c.verdict == "error")
    ok = got == want and step.returncode == 1
    detail = f"expected counterexamples at lines {want}, CrossHair reported {got}\n"
    return StepResult(
        f"crosshair catches {path.relative_to(ROOT)}",
        0 if ok else 1,
        step.seconds,
        detail + step.output,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spec.verify", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="dev profile, short CrossHair budget")
    parser.add_argument("--crosshair-timeout", type=float, default=None)
    args = parser.parse_args(argv)
    timeout = args.crosshair_timeout or (1.0 if args.quick else 3.0)
    profile = "dev" if args.quick else "verify"
    OUT.mkdir(exist_ok=True)
    results_json = OUT / "pytest.json"
    steps: list[StepResult] = []
    started = time.perf_counter()

    def say(step: StepResult) -> None:
        mark = "ok  " if step.ok else "FAIL"
        print(f"[{mark}] {step.name} ({step.seconds:.1f}s)", flush=True)
        if not step.ok:
            print(step.output[-4000:], flush=True)
        steps.append(step)

    print("== make verify: lint, types, tests, contracts, report", flush=True)
    say(_run("ruff check", [*_tool("ruff"), "check", "."]))
    say(_run("mypy --strict", _tool("mypy")))

    crosshair_conditions: list[CrosshairCondition] = []
    bug_models = sorted((ROOT / "tests" / "crosshair_bugs").glob("*.py"))
    bug_models = [p for p in bug_models if p.with_suffix(".expected").exists()]
    with ThreadPoolExecutor(max_workers=2) as pool:
        model_jobs = [pool.submit(crosshair_check, p, timeout) for p in contract_modules()]
        bug_jobs = [pool.submit(crosshair_bug_check, p, timeout) for p in bug_models]
        results_json.unlink(missing_ok=True)
        say(
            _run(
                f"pytest (Hypothesis profile {profile!r})",
                [*_tool("pytest"), f"--conformance-json={results_json}", "-p", "no:cacheprovider"],
                env={"HYPOTHESIS_PROFILE": profile},
            )
        )
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

    # Issue 6: exhaustive bounded model checking (CI-sized domains), real-thread linearizability runs,
    # and the last mutation score recorded by `make mutation` (read, not re-run).
    modelcheck_json, lin_json = OUT / "modelcheck.json", OUT / "linearizability.json"
    modelcheck_json.unlink(missing_ok=True)
    lin_json.unlink(missing_ok=True)
    say(_run("model check", [*_tool("spec.modelcheck"), "--json", str(modelcheck_json)]))
    say(_run("linearizability", [*_tool("spec.linearizability"), "--json", str(lin_json)]))
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
