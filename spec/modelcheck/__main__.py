"""``python -m spec.modelcheck [component ...] [--depth N] [--wide] [--json PATH] [--verbose]``.

Exit status 0 when every component passes, 1 when one fails.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from .components import MODEL_CHECKED
from .explorer import print_progress
from .run import check_component, components_named, format_table

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__package__}", description=__doc__)
    parser.add_argument("components", nargs="*", help=f"any of {', '.join(MODEL_CHECKED)} (default: all)")
    parser.add_argument(
        "--depth", type=int, default=None, help="depth bound (default: each component's CI bound)"
    )
    parser.add_argument("--wide", action="store_true", help="the larger domain (more keys, finer clock)")
    parser.add_argument("--json", type=Path, default=None, help="write the summaries to this JSON file")
    parser.add_argument("--verbose", action="store_true", help="one line per configuration")
    parser.add_argument("--progress", action="store_true", help="progress display (default: on a terminal)")
    args = parser.parse_args(argv)
    # The file store logs each I/O failure it answers (B2); the faults here are deliberate, so keep quiet.
    logging.getLogger("hicache").addHandler(logging.NullHandler())
    try:
        components = components_named(args.components)
    except ValueError as exc:
        parser.error(str(exc))
    show = print_progress() if args.progress or sys.stderr.isatty() else None
    summaries = []
    for component in components:
        summary = check_component(component, args.depth, wide=args.wide, progress=show)
        if show is not None:
            sys.stderr.write("\r" + " " * 100 + "\r")
        summaries.append(summary)
        print(
            f"{component.name}: {summary.verdict} {summary.states} states, {summary.transitions} transitions,"
            f" depth {summary.depth}/{summary.depth_bound}, {summary.seconds:.1f}s",
            flush=True,
        )
        if args.verbose:
            for row in summary.rows:
                fix = " fixpoint" if row["complete"] else ""
                print(
                    f"    {row['configuration']:<40} {row['states']:>7} states {row['transitions']:>8}"
                    f" transitions depth {row['depth']}{fix} {row['seconds']:.2f}s"
                )
        if summary.note:
            print("  " + summary.note.replace("\n", "\n  "))
    print("\n".join(["", "MODEL CHECK", *format_table(summaries)]))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([s.as_dict() for s in summaries], indent=1))
    return 1 if any(s.verdict == "FAIL" for s in summaries) else 0


if __name__ == "__main__":
    raise SystemExit(main())
