"""``make verify``: every machine check of the project, then the conformance report.

Steps (each is recorded, none stops the others; all start at once and share the cores, and
the suite itself is split over pytest-xdist workers, ``--jobs``):

1. ``ruff check`` and ``mypy --strict`` over the code;
2. the whole pytest suite under the ``verify`` Hypothesis profile, over ``--jobs`` workers, writing
   per-test clause coverage (``spec.pytest_plugin``).  CrossHair is part of it:
   ``tests/contracts/test_crosshair.py`` checks every function with PEP 316 contracts (one test each,
   tagged with its clauses) and every broken variant of ``spec/variants/crosshair`` (each must be
   refuted where its golden file says);
3. the bounded exhaustive model check of every component
   (``python -m spec.modelcheck``) and real-thread linearizability runs
   (``python -m spec.linearizability``);
4. the report (``spec.report``): per component and clause, which checks
   covered it, with their figures, and PASS / FAIL / UNCHECKED; then the
   model-check table, the linearizability runs and the last mutation score
   recorded by ``make mutation`` (``docs/mutation-score.json``).

Exit status 0 only when every step passed.  ``--quick`` uses the ``dev`` profile, which skips the
verify tier, CrossHair included (for iterating on the report itself).  ``--crosshair-timeout`` reaches
the CrossHair tests as ``HICACHE_CROSSHAIR_TIMEOUT`` (CPU seconds per condition, default 3).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from spec.report import StepResult, render_report

__all__ = ["main"]

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / ".verify"
MUTATION_SCORE = ROOT / "docs" / "mutation-score.json"  # written by `make mutation`


def _run(name: str, argv: list[str], env: dict[str, str] | None = None) -> StepResult:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env={**os.environ, **(env or {})})
    seconds = time.perf_counter() - start
    output = proc.stdout + proc.stderr
    return StepResult(name, proc.returncode, seconds, output)


def _tool(module: str) -> list[str]:
    return [sys.executable, "-m", module]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spec.verify", description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="dev profile: the verify tier (CrossHair included) is skipped"
    )
    parser.add_argument(
        "--crosshair-timeout", type=float, default=None, help="CPU seconds per CrossHair condition (3)"
    )
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
    knobs = {
        name: str(value)
        for name, value in (
            ("HICACHE_VERIFY_EXAMPLES", args.max_examples),
            ("HICACHE_VERIFY_STEPS", args.steps),
            ("HICACHE_CROSSHAIR_TIMEOUT", args.crosshair_timeout),
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

    print(f"== make verify: lint, types, tests with contracts ({args.jobs} workers), report", flush=True)
    # Every step is its own process and none reads another's output, so all of them start at once and
    # share the cores: the wall time is about the total work over the cores, not the sum of the steps.
    # The pytest step is the largest (CrossHair included); its workers (pytest-xdist) split it.  Results are
    # printed in a fixed order, whatever order the steps end in.
    with ThreadPoolExecutor(max_workers=5) as pool:
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
        say(modelcheck.result())
        say(linearizability.result())
    extras = {
        "modelcheck": json.loads(modelcheck_json.read_text()) if modelcheck_json.exists() else [],
        "linearizability": json.loads(lin_json.read_text()) if lin_json.exists() else [],
        "mutation": json.loads(MUTATION_SCORE.read_text()) if MUTATION_SCORE.exists() else None,
    }

    records: list[dict[str, Any]] = json.loads(results_json.read_text()) if results_json.exists() else []
    report, ok = render_report(records, steps, time.perf_counter() - started, **extras)
    print(report)
    (OUT / "report.txt").write_text(report)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
