"""``python -m tools.stress [--runs N] [--mode both|idle|busy]``: the thread and process tiers, N times
idle and N times with every core kept busy, with the failures of each test counted (issue 10).

Each run is one ``pytest`` process over :data:`TARGETS` (the real-thread tests, the
deterministic-scheduler tests, which run real threads too, and the real-process tests)
writing a JUnit XML report; the counts come from those reports, never from pytest's
text.  A *busy* run first starts one busy-loop process per core (``os.cpu_count()``),
each bounded by its own time and iteration limits, and terminates them when the run
ends.  The table printed at the end gives, for every test that failed at least once,
``failures idle / busy``; the exit status is 1 when any run had a failure (or did not
produce a report), else 0.

``make stress [RUNS=N]`` runs it with N (default 20) of each.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "BUSY_LOOP",
    "TARGETS",
    "RunResult",
    "Tally",
    "busy_cores",
    "main",
    "parse_junit",
    "pytest_command",
]

# The thread tier (tests/concurrency, the deterministic scheduler's tests, the oracle's quick --threads test;
# marker `threads`) and the process tier (tests/integration).  tests/tooling/test_stress_tool.py checks every
# `threads` test is here.
TARGETS = (
    "tests/concurrency",
    "tests/modelcheck/test_c1_schedules.py",
    "tests/oracle/test_threads.py",
    "tests/oracle/test_targets_as_they_are.py",
    "tests/integration",
)
RUN_ERROR = "(run produced no report or pytest itself failed)"

# One core's busy loop: plain arithmetic until `seconds` have passed or `iterations` were done, whichever
# comes first (the clock is read every 2**16 iterations).  It is also terminated when its run ends.
BUSY_LOOP = """\
import sys, time
seconds, iterations = float(sys.argv[1]), int(sys.argv[2])
end = time.monotonic() + seconds
n = x = 0
while n < iterations:
    x = (x * 31 + n) % 1000003
    n += 1
    if n & 0xFFFF == 0 and time.monotonic() > end:
        break
"""
BUSY_SECONDS = 1800.0  # a busy loop's own limit: far above one run, below "forever"
BUSY_ITERATIONS = 10**11


@dataclass
class RunResult:
    """One pytest run: which tests failed (node-id-like names), how many ran, its exit code and time."""

    mode: str
    failed: list[str]
    tests: int
    returncode: int
    seconds: float

    @property
    def ok(self) -> bool:
        return not self.failed and self.returncode == 0


@dataclass
class Tally:
    """Failures per test and mode over all runs."""

    runs: Counter[str] = field(default_factory=Counter)  # mode -> runs
    failures: dict[str, Counter[str]] = field(default_factory=dict)  # test -> mode -> failures
    seconds: dict[str, list[float]] = field(default_factory=dict)  # mode -> wall time of each run

    def add(self, result: RunResult) -> None:
        self.runs[result.mode] += 1
        self.seconds.setdefault(result.mode, []).append(result.seconds)
        failed = list(result.failed)
        if result.returncode != 0 and not failed:
            failed = [RUN_ERROR]  # a crash, a collection error, a hang that pytest aborted: still a failure
        for name in failed:
            self.failures.setdefault(name, Counter())[result.mode] += 1

    @property
    def total_failures(self) -> int:
        return sum(sum(c.values()) for c in self.failures.values())

    def table(self, modes: Sequence[str]) -> str:
        header = " / ".join(modes)
        lines = [f"runs: {' / '.join(str(self.runs[m]) for m in modes)} ({header})"]
        for mode in modes:
            times = self.seconds.get(mode, [])
            if times:
                low, mean, high = min(times), sum(times) / len(times), max(times)
                lines.append(f"{mode} run time: min {low:.1f} s, mean {mean:.1f} s, max {high:.1f} s")
        if not self.failures:
            lines.append(f"failures ({header}): none")
            return "\n".join(lines)
        lines.append(f"test: failures {header}")
        for name in sorted(self.failures):
            counts = " / ".join(str(self.failures[name][m]) for m in modes)
            lines.append(f"  {name}: {counts}")
        return "\n".join(lines)


def parse_junit(xml_text: str) -> tuple[list[str], int]:
    """The failed tests (``<classname>::<name>``, failures and errors) and the number of test cases."""
    root = ET.fromstring(xml_text)
    failed: list[str] = []
    cases = 0
    for case in root.iter("testcase"):
        cases += 1
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(f"{case.get('classname', '')}::{case.get('name', '')}")
    return failed, cases


def pytest_command(junit: Path, extra: Sequence[str] = ()) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pytest",
        *TARGETS,
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
        "-q",
        "--run-slow",  # the scheduler's exhaustive C1 scenarios are make verify's, and every run's here
        f"--junitxml={junit}",
        "-o",
        "junit_family=legacy",  # the tests' record_property figures warn (an error here) under xunit2
        *extra,
    ]


@contextmanager
def busy_cores(
    count: int | None = None, seconds: float = BUSY_SECONDS
) -> Iterator[list[subprocess.Popen[bytes]]]:
    """One bounded busy-loop process per core while the block runs; terminated (then killed) afterwards."""
    count = count if count is not None else (os.cpu_count() or 1)
    loops = [
        subprocess.Popen([sys.executable, "-c", BUSY_LOOP, str(seconds), str(BUSY_ITERATIONS)])
        for _ in range(count)
    ]
    try:
        yield loops
    finally:
        for loop in loops:
            loop.terminate()
        for loop in loops:
            try:
                loop.wait(timeout=10)
            except subprocess.TimeoutExpired:
                loop.kill()
                loop.wait()


def run_once(mode: str, scratch: Path, index: int, extra: Sequence[str] = ()) -> RunResult:
    junit = scratch / f"{mode}-{index}.xml"
    junit.unlink(missing_ok=True)  # a report left by an earlier invocation must not stand in for this run's
    command = pytest_command(junit, extra)
    start = time.perf_counter()
    if mode == "busy":
        with busy_cores():
            completed = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    else:
        completed = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    seconds = time.perf_counter() - start
    try:
        failed, tests = parse_junit(junit.read_text())
    except (OSError, ET.ParseError):
        failed, tests = [], 0
    result = RunResult(mode, failed, tests, completed.returncode, seconds)
    if not result.ok:
        log = scratch / f"{mode}-{index}.log"
        log.write_bytes(completed.stdout)
        print(f"    output kept in {log}", flush=True)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.stress", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per mode (default 20)")
    parser.add_argument("--mode", choices=("both", "idle", "busy"), default="both")
    parser.add_argument(
        "--out", type=Path, default=Path("build/stress"), help="reports and failed runs' output"
    )
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args(argv)
    modes = ["idle", "busy"] if args.mode == "both" else [args.mode]
    tally = Tally()
    args.out.mkdir(parents=True, exist_ok=True)
    for mode in modes:
        for index in range(args.runs):
            result = run_once(mode, args.out, index, args.pytest_args)
            tally.add(result)
            status = "ok" if result.ok else f"FAILED {', '.join(result.failed) or RUN_ERROR}"
            print(
                f"{mode} run {index + 1}/{args.runs}: {result.tests} tests, {result.seconds:.1f} s, {status}",
                flush=True,
            )
    print(tally.table(modes))
    return 1 if tally.total_failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
