"""Shared benchmark harness: interleaved rounds, per-round ratios, medians.

Machine noise (frequency scaling, the other core's load) moves all variants of
one round together, so each round's *ratio* to the baseline is stable even when
its absolute times are not.  The median over rounds is what we report.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

__all__ = ["Comparison", "compare", "ns_per_op"]


def ns_per_op(run: Callable[[], object], ops: int) -> float:
    """Time one call of ``run`` (which performs ``ops`` operations); ns per operation."""
    start = time.perf_counter_ns()
    run()
    return (time.perf_counter_ns() - start) / ops


class Comparison:
    """Median ns/op per variant and median per-round ratio against ``baseline``."""

    def __init__(self, baseline: str, samples: dict[str, list[float]]) -> None:
        self.baseline = baseline
        self.samples = samples

    def median_ns(self, name: str) -> float:
        return statistics.median(self.samples[name])

    def ratio(self, name: str, against: str | None = None) -> float:
        base = self.samples[against or self.baseline]
        return statistics.median(a / b for a, b in zip(self.samples[name], base, strict=True))

    def table(self, title: str) -> str:
        header = f"| {title} | ns/op (median) | ratio to {self.baseline} (median of rounds) |"
        rows = [header, "|---|---:|---:|"]
        for name in self.samples:
            rows.append(f"| {name} | {self.median_ns(name):.1f} | {self.ratio(name):.3f} |")
        return "\n".join(rows)


def compare(
    variants: dict[str, Callable[[], object]], ops: int, *, baseline: str, rounds: int = 15, warmup: int = 2
) -> Comparison:
    """Run every variant once per round, in rotating order, ``rounds`` times."""
    names = list(variants)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(warmup + rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            cost = ns_per_op(variants[name], ops)
            if r >= warmup:
                samples[name].append(cost)
    return Comparison(baseline, samples)
