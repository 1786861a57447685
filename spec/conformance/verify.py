"""``make verify``: every machine check of the project, then the conformance report.

Steps (each is recorded, none stops the others; all start at once and share the cores, and
the suite itself is split over pytest-xdist workers, ``--jobs``):

1. ``ruff check`` and ``mypy --strict`` over the code;
2. the whole pytest suite under the ``verify`` Hypothesis profile, over ``--jobs`` workers, writing
   per-test clause coverage (``spec.conformance.pytest_plugin``).  CrossHair is part of it:
   ``tests/contracts/test_crosshair.py`` checks every function with PEP 316 contracts (one test each,
   tagged with its clauses) and every broken variant of ``spec/variants/crosshair`` (each must be
   refuted where its golden file says);
3. the bounded exhaustive model check of every component
   (``python -m spec.modelcheck``) and real-thread linearizability runs
   (``python -m spec.linearizability``); the oracle's verdicts on the engine release's own store in the
   configurations users run, at a small budget (``python -m tools.engine_verdicts --budget small``);
4. the report (``spec.conformance.report``): per component and clause, which checks
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

from .report import StepResult, render_report

__all__ = ["main"]

# The package's name: "spec" in the repository, "hicache_spec" installed (run as __main__ too).
_PACKAGE = (__package__ or __name__).partition(".")[0]

ROOT = Path(__file__).resolve().parents[2]  # the checkout: spec/conformance/verify.py
OUT = ROOT / ".verify"
MUTATION_SCORE = ROOT / "docs" / "mutation-score.json"  # written by `make mutation`


def _run(name: str, argv: list[str], env: dict[str, str] | None = None) -> StepResult:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env={**os.environ, **(env or {})})
    return StepResult(name, proc.returncode, time.perf_counter() - start, proc.stdout + proc.stderr)


def _load(path: Path, missing: Any) -> Any:
    return json.loads(path.read_text()) if path.exists() else missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__package__}.verify", description=__doc__)
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
    profile = "dev" if args.quick else "verify"
    env = {"HYPOTHESIS_PROFILE": profile}
    for name, value in (
        ("HICACHE_VERIFY_EXAMPLES", args.max_examples),
        ("HICACHE_VERIFY_STEPS", args.steps),
        ("HICACHE_CROSSHAIR_TIMEOUT", args.crosshair_timeout),
    ):
        if value is not None:
            env[name] = str(value)
    modelcheck_args = ["--depth", str(args.modelcheck_depth)] if args.modelcheck_depth is not None else []
    modelcheck_args += ["--wide"] if args.modelcheck_wide else []
    OUT.mkdir(exist_ok=True)
    out = {name: OUT / f"{name}.json" for name in ("pytest", "modelcheck", "linearizability")}
    for stale in out.values():
        stale.unlink(missing_ok=True)
    python = [sys.executable, "-m"]
    pytest_args = ["-n", str(args.jobs), f"--conformance-json={out['pytest']}", "-p", "no:cacheprovider"]
    # Every step is its own process and none reads another's output, so all of them start at once and
    # share the cores: the wall time is about the total work over the cores, not the sum of the steps.
    # The pytest step is the largest (CrossHair included); its workers (pytest-xdist) split it, an idle
    # worker taking tests queued for a busy one (worksteal: the long machines spread).  Exhaustive bounded
    # model checking (CI-sized domains) and real-thread linearizability runs beside it.  Results are printed
    # in this order, whatever order the steps end in.
    plan: list[tuple[str, list[str], dict[str, str] | None]] = [
        ("ruff check", [*python, "ruff", "check", "."], None),
        ("mypy --strict", [*python, "mypy"], None),
        (
            f"pytest (Hypothesis profile {profile!r}, {args.jobs} workers)",
            [*python, "pytest", "--dist", "worksteal", *pytest_args],
            env,
        ),
        (
            "model check",
            [*python, f"{_PACKAGE}.modelcheck", *modelcheck_args, "--json", str(out["modelcheck"])],
            None,
        ),
        (
            "linearizability",
            [*python, f"{_PACKAGE}.linearizability", "--json", str(out["linearizability"])],
            None,
        ),
        # The engine release's HiCacheFile, judged: it still FAILs in each configuration users run, each
        # failing clause with its reproduction (a small budget; skipped, saying why, without torch or wheel)
        (
            "engine verdicts (small budget)",
            [*python, "tools.engine_verdicts", "--budget", "small", "--out", str(OUT / "engine-verdicts")],
            None,
        ),
    ]
    steps: list[StepResult] = []
    started = time.perf_counter()
    print(f"== make verify: lint, types, tests with contracts ({args.jobs} workers), report", flush=True)
    with ThreadPoolExecutor(max_workers=len(plan)) as pool:
        for step in pool.map(lambda planned: _run(*planned), plan):
            print(f"[{'ok  ' if step.ok else 'FAIL'}] {step.name} ({step.seconds:.1f}s)", flush=True)
            if not step.ok:
                print(step.output[-4000:], flush=True)
            steps.append(step)
    report, ok = render_report(
        _load(out["pytest"], []),
        steps,
        time.perf_counter() - started,
        modelcheck=_load(out["modelcheck"], []),
        linearizability=_load(out["linearizability"], []),
        mutation=_load(MUTATION_SCORE, None),  # the last score `make mutation` recorded (read, not re-run)
    )
    print(report)
    (OUT / "report.txt").write_text(report)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
