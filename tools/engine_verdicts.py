"""``make engine-verdicts``: the oracle's verdicts on the engine release's ``HiCacheFile`` (issue 31 part 3).

The release's ``sglang.srt.mem_cache.hicache_storage`` is loaded from its wheel, unmodified, under its own
dotted names (``benchmarks.engine_wheel.load_engine_storage``) and its ``HiCacheFile`` is checked, through
the engine form (O12), in the configurations users run, each pinned with ``--settings``: the default, a
cap, the metadata cache, both, and both under ``--threads 4``.  Beside it, the project's store as an engine
backend (``hicache_sglang:HiCacheReferenceStore``), in the same configurations.

Prints the table (configuration, verdict, failing clauses, calls in each counterexample, seconds), writes
each failing clause's reproduction under ``build/engine-verdicts/<store>/<configuration>/`` (each loads the
engine's modules first, so ``python -m pytest FILE`` runs it from the repository's root), and rewrites the
README's section "The engine's own store, judged" between its markers.  ``--budget small`` (``make
verify``'s step) runs a smaller budget on the release's store only and leaves the README alone; without
torch or the wheel it prints why and exits 0.  Budgets count examples and histories, never seconds.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "engine-verdicts"
README = ROOT / "README.md"
BEGIN, END = "<!-- engine verdicts: begin (make engine-verdicts) -->", "<!-- engine verdicts: end -->"

# The engine's design choices, as O3 declares them: it does not validate its input (its settings come from
# the engine's own parsed JSON, and a wrong type raises whatever Python raises), which O3 declares by
# leaving B1 out (docs/SEMANTICS.md, O3 and "The engine's own store, judged").
LEAVE_OUT = ("B1",)
DECLARE: dict[str, str] = {}  # the file store's choices: eviction=inline (V3), the engine's, the default

CAP = {"max_size": 10, "eviction_ratio": 1.0}
METADATA = {"enable_metadata_cache": True, "metadata_ttl": 5}


def slug(name: str) -> str:
    """``name`` as a directory name: lower case, runs of anything else than letters and digits as ``-``."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


@dataclass(frozen=True)
class Configuration:
    name: str
    settings: dict[str, Any]
    threads: int | None = None

    @property
    def slug(self) -> str:
        return slug(self.name)

    @property
    def command(self) -> str:
        threads = f" --threads {self.threads}" if self.threads else ""
        leave_out = "".join(f" --leave-out {group}" for group in LEAVE_OUT)
        return f"--settings '{json.dumps(self.settings)}'{threads}{leave_out}"


CONFIGURATIONS = (
    Configuration("default", {}),
    Configuration("cap (max_size 10, ratio 1.0)", CAP),
    Configuration("metadata cache (TTL 5 s)", METADATA),
    Configuration("cap + metadata cache", {**CAP, **METADATA}),
    Configuration("cap + metadata cache, --threads 4", {**CAP, **METADATA}, threads=4),
)


@dataclass(frozen=True)
class Budget:
    examples: int  # sequential: examples of ``steps`` steps
    steps: int
    histories: int  # --threads
    reference: bool = True  # hicache_sglang's store too (make verify's small budget: the release's only)


BUDGETS = {"full": Budget(300, 30, 200), "small": Budget(60, 20, 60, reference=False)}


@dataclass
class Row:
    store: str
    configuration: Configuration
    verdict: str
    clauses: list[list[str]]  # per failure
    calls: list[int]  # per failure
    seconds: float
    note: str = ""


def _engine() -> Any:
    """The release's ``HiCacheFile`` (torch and the wheel needed: ImportError / WheelUnavailable)."""
    from benchmarks import engine_wheel

    return engine_wheel.load_engine_storage().HiCacheFile


LOADER = (
    "from benchmarks.engine_wheel import load_engine_storage\n\n"
    "load_engine_storage()  # the release's modules under their own names (torch and the wheel needed)\n"
)


def _runnable(repro: str) -> str:
    """A reproduction that loads the engine's modules before its target is imported."""
    head, sep, rest = repro.partition("from __future__ import annotations\n")
    if not sep:
        return LOADER + "\n" + repro
    return f"{head}{sep}\n{LOADER}{rest}"


def run_one(store: str, target: Any, configuration: Configuration, budget: Budget, out: Path) -> Row:
    """One configuration on one store: its row, each failing clause's reproduction written under ``out``."""
    from spec.oracle import check
    from spec.oracle.__main__ import repro_name
    from spec.oracle._errors import OracleUsageError
    from spec.oracle._run import check_threads

    start = time.perf_counter()
    try:
        if configuration.threads:
            result = check_threads(
                "file-store",
                target,
                threads=configuration.threads,
                histories=budget.histories,
                settings=configuration.settings,
                leave_out=LEAVE_OUT,
                declare=DECLARE,
            )
        else:
            result = check(
                "file-store",
                target,
                max_examples=budget.examples,
                steps=budget.steps,
                settings=configuration.settings,
                leave_out=LEAVE_OUT,
                declare=DECLARE,
            )
    except OracleUsageError as error:
        seconds = round(time.perf_counter() - start, 1)
        first = str(error).split(":")[0].split("(")[0].strip()
        return Row(store, configuration, "usage error", [], [], seconds, first)
    seconds = round(time.perf_counter() - start, 1)
    folder = out / slug(store) / configuration.slug
    shutil.rmtree(folder, ignore_errors=True)
    for failure in result.failures:
        if failure.repro:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / repro_name(failure.clauses)).write_text(_runnable(failure.repro))
    clauses = [list(f.clauses) for f in result.failures]
    return Row(store, configuration, result.verdict, clauses, [f.calls for f in result.failures], seconds)


def table(rows: list[Row]) -> str:
    """The rows as a Markdown table."""
    lines = [
        "| store | configuration | verdict | failing clauses (calls in the counterexample) | seconds |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        failing = ", ".join(
            f"{'+'.join(c) or 'invariants'} ({n})" for c, n in zip(row.clauses, row.calls, strict=True)
        )
        failing = failing or row.note or "none"
        lines.append(
            f"| {row.store} | {row.configuration.name} | {row.verdict} | {failing} | {row.seconds:g} |"
        )
    return "\n".join(lines)


def rewrite_readme(text: str, section: str) -> str:
    """``text`` with the section between the markers replaced by ``section`` (ValueError without them)."""
    found = re.search(re.escape(BEGIN) + r".*?" + re.escape(END), text, re.S)
    if found is None:
        raise ValueError(f"README.md has no markers {BEGIN} ... {END}")
    return text[: found.start()] + f"{BEGIN}\n{section}\n{END}" + text[found.end() :]


def stores() -> list[tuple[str, Callable[[], Any]]]:
    def reference() -> Any:
        from hicache_sglang import HiCacheReferenceStore

        return HiCacheReferenceStore

    return [("engine HiCacheFile", _engine), ("hicache_sglang HiCacheReferenceStore", reference)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.engine_verdicts", description=__doc__)
    parser.add_argument("--budget", choices=sorted(BUDGETS), default="full")
    parser.add_argument("--out", type=Path, default=OUT, help="where the reproductions go")
    parser.add_argument("--no-readme", action="store_true", help="do not rewrite the README's section")
    args = parser.parse_args(argv)
    budget = BUDGETS[args.budget]
    logging.disable(logging.CRITICAL)  # the engine logs every refused or failed write at ERROR
    try:
        _engine()
    except Exception as error:  # ImportError (no torch), WheelUnavailable, LookupError
        print(f"engine verdicts: skipped: the engine's storage modules cannot be loaded: {error}")
        return 0
    rows: list[Row] = []
    print(
        f"engine verdicts ({args.budget} budget: {budget.examples} examples of {budget.steps} steps,"
        f" {budget.histories} histories under threads)",
        flush=True,
    )
    for store, load in stores()[: None if budget.reference else 1]:
        try:
            target = load()
        except Exception as error:
            print(f"{store}: cannot be loaded: {error}", flush=True)
            continue
        for configuration in CONFIGURATIONS:
            row = run_one(store, target, configuration, budget, args.out)
            rows.append(row)
            print(table([row]).splitlines()[-1], flush=True)
    rendered = table(rows)
    print("\n" + rendered)
    print(f"\nreproductions: {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}/")
    if args.budget == "full" and not args.no_readme:
        README.write_text(rewrite_readme(README.read_text(), rendered))
        print("README.md: section 'The engine's own store, judged' rewritten")
    engine_rows = [r for r in rows if r.store == "engine HiCacheFile"]
    failed_to_fail = [r.configuration.name for r in engine_rows if r.verdict != "FAIL"]
    if failed_to_fail:
        print(f"engine verdicts: the release's store did not FAIL in: {', '.join(failed_to_fail)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
