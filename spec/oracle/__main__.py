"""``python -m spec.oracle <component> <target>``: exit 0 PASS, 1 divergence, 2 usage or import error.

``python -m spec.oracle <component> --trace FILE``: judge a recorded hicache-trace/1 history (O7); exit 3 is
UNKNOWN (the search budget ran out).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from functools import partial
from pathlib import Path

from spec.oracle._components import COMPONENTS, available_components
from spec.oracle._picture import write_history
from spec.oracle._run import OracleResult, OracleUsageError, check
from spec.oracle._timeout import CALL_TIMEOUT
from spec.oracle._trace import DEFAULT_MAX_STEPS, check_trace

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
        help="a design choice of the target (repeatable), e.g. eviction=lru for a metadata cache (M6-lru)",
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
    parser.add_argument("--repro", default=None, help="on FAIL, also write the reproduction file here")
    parser.add_argument(
        "--list", action="store_true", help="list the components and whether they are available"
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
        default=DEFAULT_MAX_STEPS,
        help=f"--trace: search steps per part of the trace before UNKNOWN (default {DEFAULT_MAX_STEPS})",
    )
    parser.add_argument(
        "--picture", metavar="FILE.svg", help="on FAIL or UNKNOWN, draw the history found as an SVG picture"
    )
    return parser


def _choice(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name or not value:
        raise OracleUsageError(f"--declare takes CHOICE=VALUE, e.g. eviction=lru, got {text!r}")
    return name, value


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse exits 2 on bad usage already; keep --help at 0
        return int(exit_.code or 0)
    if os.getcwd() not in sys.path:  # targets are imported from the current directory too, as with -m
        sys.path.insert(0, os.getcwd())
    if args.list:
        for name, ready in available_components().items():
            print(f"{name}: {'available' if ready else 'machine not in this tree yet'}")
        return 0
    if args.trace:
        return _trace(parser, args)
    if not args.component or not args.target:
        parser.print_usage(sys.stderr)
        print("hicache-oracle: error: give a component and a target (or --list)", file=sys.stderr)
        return 2
    try:
        adapter = json.loads(args.adapter) if args.adapter else None
        if adapter is not None and not isinstance(adapter, dict):
            raise OracleUsageError("--adapter must be a JSON object")
        declare = dict(_choice(text) for text in args.declare)
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
        )
    except (json.JSONDecodeError, OracleUsageError) as error:
        why = f"--adapter is not valid JSON: {error}" if isinstance(error, json.JSONDecodeError) else error
        print(f"hicache-oracle: error: {why}", file=sys.stderr)
        return 2
    if args.repro and result.repro:
        Path(args.repro).write_text(result.repro)
    _print(result, args.json, "reproduction (save as test_repro.py and run pytest)")
    return 0 if result.passed else 1


EXIT = {"PASS": 0, "FAIL": 1, "UNKNOWN": 3}


def _trace(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``--trace FILE``: the component's spec judges the recorded history; no target is run."""
    if not args.component or args.target:
        parser.print_usage(sys.stderr)
        why = "give the component" if not args.component else f"--trace takes no target (got {args.target!r})"
        print(f"hicache-oracle: error: {why}: hicache-oracle COMPONENT --trace FILE", file=sys.stderr)
        return 2
    try:
        result = check_trace(args.component, args.trace, max_steps=args.max_steps)
    except OracleUsageError as error:
        print(f"hicache-oracle: error: {error}", file=sys.stderr)
        return 2
    if args.repro and result.repro:
        Path(args.repro).write_text(result.repro)
    if args.picture and result.verdict != "PASS":
        operations, red = result.picture_history()
        title = f"{result.verdict}: {args.trace} as {args.component}"
        write_history(
            args.picture, operations, red, [op.now for op in operations if op.now is not None], title
        )
    _print(result, args.json, "the unexplained lines, as a trace (run --trace on it)")
    return EXIT[result.verdict]


def _print(result: OracleResult, as_json: bool, repro_title: str) -> None:
    try:
        if as_json:
            print(json.dumps(result.as_dict(), indent=1, sort_keys=True))
        else:
            print(result.summary())
            if result.repro:
                print(f"\n# ---- {repro_title} ----")
                print(result.repro, end="")
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader left early (``| head``): the verdict stands.  Point stdout at /dev/null so that the
        # interpreter's final flush of what is still buffered does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
