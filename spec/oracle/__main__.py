"""``python -m spec.oracle <component> <target>``: exit 0 PASS, 1 divergence, 2 usage or import error.

``python -m spec.oracle <component> --trace FILE``: judge a recorded hicache-trace/1 history (O7); exit 3 is
UNKNOWN (the search budget ran out).

``--help``, ``--list`` and ``COMPONENT --describe`` read the oracle's tables only, so they work without
Hypothesis; a run needs it, and says how to install it when it is missing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ..linearizability.checker import MAX_STEPS
from ._budgets import DEFAULT_MAX_STEPS, HISTORIES
from ._components import COMPONENTS
from ._describe import describe, summary_line
from ._errors import OracleUsageError, one_line
from ._timeout import CALL_TIMEOUT

if TYPE_CHECKING:
    from ._result import Failure, OracleResult

__all__ = ["MISSING", "main", "repro_name"]

MISSING = (
    "hicache-oracle: the oracle needs Hypothesis and pytest (the package's [oracle] extra), which are not"
    " installed here: pip install hypothesis pytest, or install the package with its extra,"
    " pip install '/path/to/hicache-reference[oracle]'"
)


class _Parser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line (the usage is one ``--help`` away), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (hicache-oracle --help for usage)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="hicache-oracle",
        description="Check an implementation against the HiCache spec with the project's lock-step machines.",
        epilog="Exit status: 0 PASS, 1 divergence found (a reproduction is printed), 2 usage or import error"
        " (or a malformed trace), 3 UNKNOWN (a search budget ran out)",
    )
    parser.add_argument("component", nargs="?", help=f"one of: {', '.join(COMPONENTS)}")
    parser.add_argument("target", nargs="?", help="package.module:Class or package.module:factory")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0); runs are deterministic")
    parser.add_argument("--max-examples", type=int, default=500, help="examples to run (default 500)")
    parser.add_argument("--steps", type=int, default=40, help="steps per example (default 40)")
    parser.add_argument("--seconds", type=float, default=None, help="stop starting new examples after this")
    parser.add_argument("--adapter", help="JSON adapter: methods, arguments, positional, form, omit")
    parser.add_argument(
        "--leave-out",
        action="append",
        default=[],
        metavar="GROUP",
        help="set a clause group aside (repeatable), e.g. B1 for bad input",
    )
    parser.add_argument(
        "--declare",
        action="append",
        default=[],
        metavar="CHOICE=VALUE",
        help="a design choice of the target (repeatable), e.g. eviction=lru for a metadata cache (M6-lru), "
        "eviction=background for a file evictor or store that evicts in the background (V3-bg)",
    )
    parser.add_argument(
        "--settings",
        metavar="JSON",
        help="file-store: pin the store's configuration for every example and history, e.g."
        ' \'{"max_size": 10, "eviction_ratio": 1.0, "enable_metadata_cache": true, "metadata_ttl": 5}\';'
        " the settings not given take the engine's defaults (cap off, ratio 0.9, metadata cache off, TTL 5)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        metavar="N",
        help="O6: run N real threads on the target and check each history linearizable (M7, M9, C5); "
        "metadata-cache and file-store",
    )
    parser.add_argument(
        "--histories", type=int, default=None, help=f"--threads: histories to run (default {HISTORIES})"
    )
    parser.add_argument(
        "--call-timeout",
        type=float,
        default=CALL_TIMEOUT,
        metavar="SECONDS",
        help=f"a call to the target that does not return within this is a FAIL with every thread's stack, "
        f"never a hang (default {CALL_TIMEOUT:g})",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="for CI: exit 1 also when a clause was not checked, for want of a method or mapping of the"
        " target or under 'not checked' (O8), and say which (the report's strict_gaps); not counted: what"
        " --leave-out (or a trace's header) asked for, and what the run's mode never checks (M7, C5"
        " without --threads; the sequential clauses with it; M8's counters from a --trace): for CI, run"
        " both with --strict; with --trace, the clauses the trace has no call of count too",
    )
    parser.add_argument(
        "--repro",
        default=None,
        metavar="PATH",
        help="on FAIL, also write the reproduction here: a file (the first failure's), or a directory"
        " (an existing one, or a path ending in /): one test_repro_<clauses>.py per failing clause;"
        " checked before the run",
    )
    parser.add_argument(
        "--list",
        action="store_true",
        help="list the components: each one's clauses, constructor and required methods, whether it can run",
    )
    parser.add_argument(
        "--describe",
        action="store_true",
        help="with a COMPONENT: what a target must provide (constructor, methods and their clauses, the"
        " groups --leave-out takes, the --declare choices, the adapter keys with examples)",
    )
    parser.add_argument(
        "--trace",
        metavar="FILE",
        help="judge a history recorded in the format hicache-trace/1 (docs/SEMANTICS.md O7) instead of a"
        " target: metadata-cache, existence-cache or pool-beliefs",
    )
    parser.add_argument(
        "--max-steps",
        type=int,
        default=None,
        help=f"search steps per part of a --trace (default {DEFAULT_MAX_STEPS}) or per history of --threads"
        f" (default {MAX_STEPS}) before UNKNOWN",
    )
    parser.add_argument(
        "--picture", metavar="FILE.svg", help="on FAIL or UNKNOWN, draw the history found as an SVG picture"
    )
    return parser


def _list() -> None:
    for name, component in COMPONENTS.items():
        try:
            component.machine()
            ready = "available"
        except (ImportError, AttributeError) as error:
            ready = f"not available ({one_line(error)})"
        print(f"{name}: {ready}; {summary_line(component)}")
    print("hicache-oracle COMPONENT --describe says what each one needs and checks")


def _choice(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name or not value:
        raise OracleUsageError(f"--declare takes CHOICE=VALUE, e.g. eviction=lru, got {text!r}")
    return name, value


def _settings(text: str | None) -> dict[str, object] | None:
    """``--settings``'s JSON object (its keys are checked by the run: OracleUsageError, exit 2)."""
    if text is None:
        return None
    try:
        settings = json.loads(text)
    except json.JSONDecodeError as error:
        raise OracleUsageError(f"--settings is not valid JSON: {error}") from None
    if not isinstance(settings, dict):
        raise OracleUsageError(f"--settings must be a JSON object, got {text!r}")
    return settings


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse exits 2 on bad usage already; keep --help at 0
        return int(exit_.code or 0)
    if os.getcwd() not in sys.path:  # targets are imported from the current directory too, as with -m
        sys.path.insert(0, os.getcwd())
    if args.list:
        _list()
        return 0
    if args.describe:
        if args.component not in COMPONENTS:
            why = f"unknown component {args.component!r}" if args.component else "give a component"
            known = ", ".join(COMPONENTS)
            print(f"hicache-oracle: error: --describe: {why}; one of: {known}", file=sys.stderr)
            return 2
        _emit(describe(COMPONENTS[args.component]) + "\n")
        return 0
    if args.trace:
        return _trace(args)
    if not args.component or not args.target:
        print(
            "hicache-oracle: error: give a component and a target (or --list, or COMPONENT --describe;"
            " hicache-oracle --help for usage)",
            file=sys.stderr,
        )
        return 2
    if _without_hypothesis():
        return 2
    from ._picture import write_history
    from ._run import check, check_threads
    from ._threads import ThreadsResult

    try:
        repro = _repro_target(args.repro) if args.repro else None
        adapter = json.loads(args.adapter) if args.adapter else None
        if adapter is not None and not isinstance(adapter, dict):
            raise OracleUsageError("--adapter must be a JSON object")
        declare = dict(_choice(text) for text in args.declare)
        settings = _settings(args.settings)
        result: OracleResult
        if args.threads is not None:
            result = check_threads(
                args.component,
                args.target,
                threads=args.threads,
                seed=args.seed,
                histories=HISTORIES if args.histories is None else args.histories,
                call_timeout=args.call_timeout,
                max_steps=MAX_STEPS if args.max_steps is None else args.max_steps,
                adapter=adapter,
                declare=declare,
                leave_out=args.leave_out,
                settings=settings,
                max_examples=args.max_examples,  # the sequential check a history one at a time hands to
            )
        else:
            result = check(
                args.component,
                args.target,
                seed=args.seed,
                max_examples=args.max_examples,
                steps=args.steps,
                seconds=args.seconds,
                adapter=adapter,
                progress=None if args.json else partial(print, file=sys.stderr, flush=True),
                leave_out=args.leave_out,
                declare=declare,
                call_timeout=args.call_timeout,
                settings=settings,
            )
    except (json.JSONDecodeError, OracleUsageError) as error:
        bad_json = isinstance(error, json.JSONDecodeError)
        print(f"hicache-oracle: error: {'--adapter is not valid JSON: ' * bad_json}{error}", file=sys.stderr)
        return 2
    strict = result.strict_summary() if args.strict else ""
    _print(result, args.json, "reproduction (save as test_repro.py and run pytest)", strict)
    if args.picture and isinstance(result, ThreadsResult) and result.history:
        operations, red = result.picture_history()
        title = f"{result.verdict}: {result.target} as {args.component} under --threads {args.threads}"
        write_history(args.picture, operations, red, result.instants(), title)
    if repro is not None:
        try:
            _write_repros(repro, result.failures)
        except OSError as error:  # checked before the run: the path changed under it
            print(f"hicache-oracle: error: --repro {args.repro}: {one_line(error)}", file=sys.stderr)
            return 2
    return 1 if strict and result.verdict == "PASS" else EXIT[result.verdict]


EXIT = {"PASS": 0, "FAIL": 1, "UNKNOWN": 3}


def _without_hypothesis() -> bool:
    """Whether a run cannot start for want of Hypothesis (then what to install is printed, exit 2)."""
    missing = importlib.util.find_spec("hypothesis") is None
    if missing:
        print(MISSING, file=sys.stderr)
    return missing


def _trace(args: argparse.Namespace) -> int:
    """``--trace FILE``: the component's spec judges the recorded history; no target is run."""
    if not args.component or args.target:
        why = "give the component" if not args.component else f"--trace takes no target (got {args.target!r})"
        print(f"hicache-oracle: error: {why}: hicache-oracle COMPONENT --trace FILE", file=sys.stderr)
        return 2
    if _without_hypothesis():
        return 2
    from ._picture import write_history
    from ._trace import check_trace

    try:
        repro = _repro_target(args.repro) if args.repro else None
        if repro is not None and repro.is_dir():
            raise OracleUsageError(f"--repro {args.repro}: with --trace, give a file (the unexplained lines)")
        steps = DEFAULT_MAX_STEPS if args.max_steps is None else args.max_steps
        result = check_trace(args.component, args.trace, max_steps=steps)
    except OracleUsageError as error:
        print(f"hicache-oracle: error: {error}", file=sys.stderr)
        return 2
    if repro is not None and result.repro:
        repro.write_text(result.repro)
    if args.picture and result.verdict != "PASS":
        operations, red = result.picture_history()
        title = f"{result.verdict}: {args.trace} as {args.component}"
        write_history(
            args.picture, operations, red, [op.now for op in operations if op.now is not None], title
        )
    strict = result.strict_summary() if args.strict else ""
    _print(result, args.json, "the unexplained lines, as a trace (run --trace on it)", strict)
    return 1 if strict and result.verdict == "PASS" else EXIT[result.verdict]


def _print(result: OracleResult, as_json: bool, repro_title: str, strict: str = "") -> None:
    """The report, as JSON or as text (with ``--strict``'s line and the reproduction)."""
    if as_json:
        _emit(json.dumps(result.as_dict(), indent=1, sort_keys=True) + "\n")
        return
    text = result.summary() + "\n" + (f"  {strict}\n" if strict else "")
    if result.repro:
        text += f"\n# ---- {repro_title} ----\n" + result.repro
    _emit(text)


def _emit(text: str) -> None:
    """Print ``text``; a reader that leaves early (``| head``) is no error."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # The verdict stands.  Point stdout at /dev/null so that the interpreter's final flush of what
        # is still buffered does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _repro_target(path: str) -> Path:
    """``--repro``'s path, checked before the run (OracleUsageError, exit 2, when it cannot be written):
    an existing directory, or a path ending in ``/`` (created), receives one file per failing clause;
    any other path is the file of the first failure's reproduction."""
    target = Path(path)
    try:
        if path.endswith(("/", os.sep)) or target.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            folder = target
        else:
            folder = target.parent
            if not folder.is_dir():
                raise OracleUsageError(f"--repro {path}: no directory {str(folder)!r} to write the file in")
            if target.exists():
                with target.open("a"):  # writable, left as it is
                    pass
        with tempfile.TemporaryFile(dir=folder):  # a file can be made there (not only permitted: made)
            pass
    except OSError as error:
        raise OracleUsageError(f"--repro {path}: cannot be written: {one_line(error)}") from None
    return target


def repro_name(clauses: list[str]) -> str:
    """The file name of a failure's reproduction in a ``--repro`` directory: ``test_repro_M2.py``."""
    return f"test_repro_{'_'.join(clauses) or 'invariants'}.py"


def _write_repros(target: Path, failures: list[Failure]) -> None:
    """Each failure's reproduction into the directory ``target``, or the first's into the file."""
    written = [f for f in failures if f["repro"]]
    if not written:
        return
    if not target.is_dir():
        target.write_text(written[0]["repro"])
        if len(written) > 1:
            print(
                f"hicache-oracle: {target} holds the first of {len(written)} reproductions; give --repro a"
                " directory to save one per failing clause",
                file=sys.stderr,
            )
        return
    for failure in written:
        (target / repro_name(failure["clauses"])).write_text(failure["repro"])


if __name__ == "__main__":
    sys.exit(main())
