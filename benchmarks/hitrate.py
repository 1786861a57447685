"""``make hitrate``: the MetadataCache hit rate of ``eviction="birth"`` against ``"lru"`` (M6, M6-lru).

A seeded Zipf key stream (exponents ``S``) over ``10 x max_entries`` distinct keys; each request asks
``contains(key)`` and, on a miss, ``add(key)`` (what the file store does after a ``stat`` that found
the page).  The clock moves one step per request; the TTL is ``-1`` (never expires) or ``TTL_CACHES``
times ``max_entries`` steps (a belief outlives a few cache-fulls of requests).  The hit rate is
counted after a warm-up of ``WARMUP`` x max_entries requests.  Deterministic: no timing, so the figures
are the same on every machine.

Writes ``benchmarks/metadata_hitrate.svg`` and its figures beside it (``.json``), and prints the
Markdown table that ``make bench`` puts in ``benchmarks/RESULTS.md`` (``bench_metadata_hitrate.py``).

    python -m benchmarks.hitrate [--quick] [--out PATH]
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import math
import random
import sys
from html import escape
from pathlib import Path

from benchmarks.chart import COLORS
from hicache import MetadataCache

__all__ = ["SIZES", "S", "hit_rate", "sweep", "table", "zipf_stream"]

HERE = Path(__file__).resolve().parent
SIZES = (64, 128, 256, 512, 1024, 2048)
S = (0.8, 1.0, 1.2)
KEYS_PER_ENTRY = 10  # distinct keys: 10 x max_entries
TTL_CACHES = 4  # the finite TTL, in requests: 4 x max_entries
WARMUP = 20  # requests before counting, per entry
MEASURED = 100  # requests counted, per entry
SEED = 13
ORDERS = ("birth", "lru")
Figures = dict[str, dict[str, dict[str, list[tuple[int, float]]]]]  # ttl label -> s -> order -> points


def zipf_stream(keys: int, s: float, n: int, seed: int) -> list[int]:
    """``n`` keys drawn from ranks 0..keys-1 with probability proportional to ``1 / (rank + 1) ** s``."""
    cumulative = list(itertools.accumulate(1.0 / (rank + 1) ** s for rank in range(keys)))
    total = cumulative[-1]
    rng = random.Random(seed)
    draw = rng.random
    return [bisect.bisect(cumulative, draw() * total) for _ in range(n)]


def hit_rate(stream: list[int], max_entries: int, ttl: float, eviction: str, warmup: int) -> float:
    """The share of ``contains`` hits over ``stream[warmup:]``; a miss is followed by ``add``."""
    now = [0.0]
    cache = MetadataCache(ttl, max_entries=max_entries, clock=lambda: now[0], eviction=eviction)
    contains, add = cache.contains, cache.add
    hits = 0
    for i, key in enumerate(stream):
        now[0] = float(i)
        if contains(key):
            if i >= warmup:
                hits += 1
        else:
            add(key)
    return hits / (len(stream) - warmup)


def ttl_labels(quick: bool) -> dict[str, float | None]:
    """Label -> TTL (None: ``TTL_CACHES`` x max_entries steps, set per size)."""
    return {"TTL -1": -1.0, f"TTL {TTL_CACHES} x max_entries requests": None}


def sweep(sizes: tuple[int, ...], measured: int = MEASURED) -> Figures:
    figures: Figures = {}
    for label, ttl in ttl_labels(False).items():
        for s in S:
            for size in sizes:
                warmup = WARMUP * size
                stream = zipf_stream(KEYS_PER_ENTRY * size, s, warmup + measured * size, SEED)
                for order in ORDERS:
                    rate = hit_rate(stream, size, TTL_CACHES * size if ttl is None else ttl, order, warmup)
                    figures.setdefault(label, {}).setdefault(f"s={s}", {}).setdefault(order, []).append(
                        (size, rate)
                    )
    return figures


def table(figures: Figures) -> str:
    """The figures as Markdown: one row per (TTL, s, max_entries), birth and lru side by side."""
    rows = [
        "| TTL | Zipf s | max_entries | hit rate, birth | hit rate, lru | lru - birth |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, by_s in figures.items():
        for s, by_order in by_s.items():
            for (size, birth), (_, lru) in zip(by_order["birth"], by_order["lru"], strict=True):
                rows.append(f"| {label} | {s[2:]} | {size} | {birth:.3f} | {lru:.3f} | {lru - birth:+.3f} |")
    return "\n".join(rows)


def _panel(by_s: dict[str, dict[str, list[tuple[int, float]]]], title: str, x0: int, width: int) -> list[str]:
    """One chart: hit rate (linear, 0-1) against max_entries (log 2), solid lru, dashed birth."""
    left, right, top, bottom, height = 60, 20, 40, 50, 420
    plot_w, plot_h = width - left - right, height - top - bottom
    sizes = sorted({x for by_order in by_s.values() for points in by_order.values() for x, _ in points})
    lo, hi = math.log2(sizes[0]), math.log2(sizes[-1])

    def px(x: float) -> float:
        return x0 + left + (math.log2(x) - lo) / ((hi - lo) or 1) * plot_w

    def py(y: float) -> float:
        return top + plot_h - y * plot_h

    out = [f'<text x="{x0 + left}" y="24" font-size="14" font-weight="bold">{escape(title)}</text>']
    for tick in range(11):
        y = tick / 10
        out.append(
            f'<line x1="{x0 + left}" x2="{x0 + left + plot_w}" y1="{py(y):.1f}" y2="{py(y):.1f}"'
            ' stroke="#ddd"/>'
            f'<text x="{x0 + left - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:.1f}</text>'
        )
    for x in sizes:
        out.append(
            f'<line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{top}" y2="{top + plot_h}" stroke="#eee"/>'
            f'<text x="{px(x):.1f}" y="{top + plot_h + 18}" text-anchor="middle">{x}</text>'
        )
    out.append(
        f'<rect x="{x0 + left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333"/>'
        f'<text x="{x0 + left + plot_w / 2}" y="{height - 10}" text-anchor="middle">'
        f"max_entries ({KEYS_PER_ENTRY}x as many distinct keys)</text>"
    )
    for i, by_order in enumerate(by_s.values()):
        color = COLORS[i % len(COLORS)]
        for order, points in by_order.items():
            dash = ' stroke-dasharray="6 4"' if order == "birth" else ""
            path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in points)
            out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
            for x, y in points:
                out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{color}"/>')
    return out


def chart(figures: Figures) -> str:
    """Both TTL panels side by side, and one legend: a colour per Zipf exponent, dashed birth, solid lru."""
    panel_w, legend_w, height = 460, 170, 420
    width = panel_w * len(figures) + legend_w
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text transform="translate(14 {height / 2}) rotate(-90)" text-anchor="middle">'
        "hit rate of contains (then add on a miss)</text>",
    ]
    for i, (label, by_s) in enumerate(figures.items()):
        out += _panel(by_s, f"Zipf key stream, {label}", i * panel_w, panel_w)
    lx = panel_w * len(figures) + 10
    first = next(iter(figures.values()))
    for i, s in enumerate(first):
        color = COLORS[i % len(COLORS)]
        for j, order in enumerate(ORDERS):
            ly = 50 + 40 * i + 16 * j
            dash = ' stroke-dasharray="6 4"' if order == "birth" else ""
            out.append(
                f'<line x1="{lx}" x2="{lx + 24}" y1="{ly}" y2="{ly}" stroke="{color}"'
                f' stroke-width="2"{dash}/>'
                f'<text x="{lx + 30}" y="{ly + 4}">{escape(f"{s}, {order}")}</text>'
            )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hitrate")
    parser.add_argument("--quick", action="store_true", help="the three smallest sizes (a smoke run)")
    parser.add_argument("--out", type=Path, default=HERE / "metadata_hitrate.svg", help="the SVG to write")
    args = parser.parse_args(argv)
    figures = sweep(SIZES[:3] if args.quick else SIZES)
    args.out.write_text(chart(figures))
    args.out.with_suffix(".json").write_text(json.dumps(figures, indent=1) + "\n")
    print(table(figures))
    print(f"wrote {args.out} and its figures {args.out.with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
