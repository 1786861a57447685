"""``python -m spec.oracle <component> <target>``: exit 0 PASS, 1 divergence, 2 usage or import error."""

from __future__ import annotations

import argparse
import json
import os
import sys
from functools import partial
from pathlib import Path

from spec.linearizability.checker import MAX_STEPS
from spec.oracle._components import COMPONENTS, available_components
from spec.oracle._run import OracleUsageError, check
from spec.oracle._threads import CALL_TIMEOUT, HISTORIES, check_threads

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hicache-oracle",
        description="Check an implementation against the HiCache spec with the project's lock-step machines.",
        epilog="Exit status: 0 PASS, 1 divergence found (a reproduction is printed), 2 usage or import "
        "error, 3 UNKNOWN (--threads: a search exhausted its budget; never a PASS)",
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
        "--threads",
        type=int,
        default=None,
        metavar="N",
        help="O6: run N real threads on the target and check each history linearizable (M7, M9, C5); "
        "metadata-cache and file-store",
    )
    parser.add_argument(
        "--histories", type=int, default=None, help="--threads: histories to run (default 600)"
    )
    parser.add_argument(
        "--search-steps",
        type=int,
        default=None,
        help="--threads: search steps per history before it is UNKNOWN (default 5,000,000)",
    )
    parser.add_argument(
        "--call-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="--threads: a call that does not return within this is a FAIL with stacks (default 10)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--repro", default=None, help="on FAIL, also write the reproduction file here")
    parser.add_argument(
        "--list", action="store_true", help="list the components and whether they are available"
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
    if not args.component or not args.target:
        parser.print_usage(sys.stderr)
        print("hicache-oracle: error: give a component and a target (or --list)", file=sys.stderr)
        return 2
    try:
        adapter = json.loads(args.adapter) if args.adapter else None
        if adapter is not None and not isinstance(adapter, dict):
            raise OracleUsageError("--adapter must be a JSON object")
        declare = dict(_choice(text) for text in args.declare)
        if args.threads is not None:
            result = check_threads(
                args.component,
                args.target,
                threads=args.threads,
                seed=args.seed,
                histories=HISTORIES if args.histories is None else args.histories,
                call_timeout=CALL_TIMEOUT if args.call_timeout is None else args.call_timeout,
                max_steps=MAX_STEPS if args.search_steps is None else args.search_steps,
                adapter=adapter,
                declare=declare,
                leave_out=args.leave_out,
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
            )
    except (json.JSONDecodeError, OracleUsageError) as error:
        why = f"--adapter is not valid JSON: {error}" if isinstance(error, json.JSONDecodeError) else error
        print(f"hicache-oracle: error: {why}", file=sys.stderr)
        return 2
    if args.repro and result.repro:
        Path(args.repro).write_text(result.repro)
    try:
        if args.json:
            print(json.dumps(result.as_dict(), indent=1, sort_keys=True))
        else:
            print(result.summary())
            if result.repro:
                print("\n# ---- reproduction (save as test_repro.py and run pytest) ----")
                print(result.repro, end="")
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader left early (``| head``): the verdict stands.  Point stdout at /dev/null so that the
        # interpreter's final flush of what is still buffered does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0 if result.passed else 3 if result.verdict == "UNKNOWN" else 1


if __name__ == "__main__":
    sys.exit(main())
