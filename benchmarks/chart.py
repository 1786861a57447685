"""``make chart``: ns/page of ``contains_all`` against cache size per variant, as an SVG (stdlib only).

Writes ``benchmarks/existence_cache.svg`` (and the figures beside it as
``benchmarks/existence_cache.json``; ``--out`` elsewhere).  Each point is ns
per chain page: the median per-round ratio to the floor (interleaved rounds,
``benchmarks/_harness.py``) times the floor's median, so that machine noise
cancels as it does in the tables.  Chains of 64 pages at random offsets, the
garbage collector paused while timing.  The spec rebuilds a list per touch, so
it is only measured on the small sizes.

    python -m benchmarks.chart [--quick] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from html import escape
from pathlib import Path

from benchmarks.bench_existence_cache import (
    FLOOR,
    PAGES,
    POOL,
    POOL_TEXTBOOK,
    TextbookPoolBeliefs,
    page_hashes,
    random_chains,
    timed,
)
from benchmarks.bench_existence_cache import _checker as checker
from benchmarks.bench_existence_cache import _global_variants as global_variants
from benchmarks.bench_existence_cache import _walk as walk
from hicache import PoolExistenceBeliefs

__all__ = ["line_chart", "main", "sweep"]

HERE = Path(__file__).resolve().parent
SIZES = (2 * 1024, 8 * 1024, 32 * 1024, 128 * 1024, 512 * 1024)
SPEC_SIZES = (512, 2 * 1024)
COLORS = ("#1b6ac9", "#d9480f", "#2b8a3e", "#862e9c", "#495057", "#c2255c", "#0b7285")
Series = dict[str, list[tuple[float, float]]]


def sweep(sizes: tuple[int, ...], spec_sizes: tuple[int, ...], rounds: int, calls: int) -> Series:
    """Median ns/page of each variant at each size."""
    series: Series = {}
    for size in sorted(set(sizes) | set(spec_sizes)):
        print(f"size {size}", file=sys.stderr, flush=True)
        hashes = page_hashes(size, 3)
        with_spec = size in spec_sizes
        built = global_variants(size, hashes, with_spec)
        pool, textbook = PoolExistenceBeliefs(size), TextbookPoolBeliefs(size)
        for start in range(0, size, PAGES):
            pool.add(hashes[start : start + PAGES])
            textbook.add(hashes[start : start + PAGES])
        n = 8 if with_spec else calls
        chains = random_chains(hashes, n, random.Random(size))
        runs = {name: walk(checker(cache), chains, True) for name, cache in built.items()}
        runs["per-pool production"] = walk(pool.contains_all, chains, True)
        runs[f"per-pool {POOL_TEXTBOOK}"] = walk(textbook.contains_all, chains, True)
        if size not in sizes:
            runs = {name: runs[name] for name in ("spec", FLOOR)}
        result = timed(runs, n * PAGES, baseline=FLOOR, rounds=3 if with_spec else rounds, warmup=1)
        floor_ns = result.median_ns(FLOOR)
        for name in result.samples:
            # the median per-round ratio to the floor, in the floor's ns: machine noise cancels
            series.setdefault(name, []).append((size, result.ratio(name) * floor_ns))
    return series


def _ticks(low: float, high: float) -> list[float]:
    return [10.0**e for e in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)]


def line_chart(
    series: Series, *, title: str, x_label: str, y_label: str, width: int = 880, height: int = 440
) -> str:
    """An SVG line chart with log-scaled axes (sizes and times both span decades)."""
    left, right, top, bottom = 70, 300, 40, 50
    xs = [x for points in series.values() for x, _ in points]
    ys = [y for points in series.values() for _, y in points]
    x_ticks = sorted(set(xs))
    y_ticks = _ticks(min(ys), max(ys))
    x0, x1 = math.log2(min(xs)), math.log2(max(xs))
    y0, y1 = math.log10(y_ticks[0]), math.log10(y_ticks[-1])
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + (math.log2(x) - x0) / ((x1 - x0) or 1) * plot_w

    def py(y: float) -> float:
        return top + plot_h - (math.log10(y) - y0) / ((y1 - y0) or 1) * plot_h

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="22" font-size="15" font-weight="bold">{escape(title)}</text>',
    ]
    for y in y_ticks:
        out.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{py(y):.1f}" y2="{py(y):.1f}" stroke="#ddd"/>'
        )
        out.append(f'<text x="{left - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:g}</text>')
    for x in x_ticks:
        label = f"{x / 1024:g}Ki" if x >= 1024 else f"{x:g}"
        out.append(f'<line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{top}" y2="{top + plot_h}" stroke="#eee"/>')
        out.append(f'<text x="{px(x):.1f}" y="{top + plot_h + 18}" text-anchor="middle">{label}</text>')
    out.append(
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333"/>'
        f'<text x="{left + plot_w / 2}" y="{height - 10}" text-anchor="middle">{escape(x_label)}</text>'
        f'<text transform="translate(16 {top + plot_h / 2}) rotate(-90)" text-anchor="middle">'
        f"{escape(y_label)}</text>"
    )
    for i, (name, points) in enumerate(series.items()):
        color = COLORS[i % len(COLORS)]
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for x, y in points:
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{color}"/>')
        ly = top + 10 + 20 * i
        out.append(
            f'<line x1="{width - right + 12}" x2="{width - right + 32}" y1="{ly}" y2="{ly}" stroke="{color}" '
            f'stroke-width="2"/><text x="{width - right + 38}" y="{ly + 4}">{escape(name)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.chart")
    parser.add_argument("--quick", action="store_true", help="small sizes and few rounds (a smoke run)")
    parser.add_argument("--out", type=Path, default=HERE / "existence_cache.svg", help="the SVG to write")
    args = parser.parse_args(argv)
    sizes = SIZES[:2] if args.quick else SIZES
    series = sweep(
        sizes,
        SPEC_SIZES[:1] if args.quick else SPEC_SIZES,
        3 if args.quick else 15,
        64 if args.quick else 128,
    )
    svg = line_chart(
        series,
        title=f"contains_all: ns per page vs cache size (chains of {PAGES}, random offsets, pool {POOL!r})",
        x_label="beliefs in the cache",
        y_label="ns per page (median, log scale)",
    )
    args.out.write_text(svg)
    args.out.with_suffix(".json").write_text(json.dumps(series, indent=1) + "\n")
    print(f"wrote {args.out} and its figures {args.out.with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
