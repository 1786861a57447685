"""Run the model checker over components and summarize it as a model checker reports."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from .components import MODEL_CHECKED, ModelCheckedComponent
from .explorer import Progress, Result, explore

__all__ = ["ComponentSummary", "check_component", "format_table"]


@dataclass
class ComponentSummary:
    """One component's figures, summed over the configurations of its domain."""

    component: str
    clauses: list[str]
    depth_bound: int
    configurations: int = 0
    states: int = 0
    transitions: int = 0
    depth: int = 0  # deepest level at which any configuration found a new state
    complete: bool = False  # every configuration reached its fixpoint within the bound
    seconds: float = 0.0
    verdict: str = "PASS"  # or FAIL
    note: str = ""
    rows: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_component(
    component: ModelCheckedComponent,
    depth: int | None = None,
    *,
    wide: bool = False,
    progress: Progress | None = None,
) -> ComponentSummary:
    """Explore every configuration of ``component`` up to ``depth`` (default: its CI bound)."""
    bound = component.default_depth if depth is None else depth
    summary = ComponentSummary(component.name, list(component.clauses), bound)
    start = time.perf_counter()
    runs: Iterable[Result]
    if component.schedules:  # every interleaving of each scenario: depth = the most choice points
        runs = component.module.results()
        summary.depth_bound = max((r.max_depth for r in runs), default=0)
    else:  # explored one by one, up to the first counterexample
        runs = (explore(config, bound, progress=progress) for config in component.configurations(wide))
    results: list[Result] = []
    for result in runs:
        results.append(result)
        summary.rows.append(
            {
                "configuration": result.configuration,
                "states": result.states,
                "transitions": result.transitions,
                "depth": result.diameter,
                "complete": result.complete,
                "seconds": round(result.seconds, 3),
                "ok": result.ok,
            }
        )
        if result.counterexample is not None:
            summary.verdict, summary.note = "FAIL", result.counterexample.render()
            break
    summary.configurations = len(results)
    summary.states = sum(r.states for r in results)
    summary.transitions = sum(r.transitions for r in results)
    summary.depth = max((r.diameter for r in results), default=0)
    summary.complete = bool(results) and all(r.complete for r in results)
    summary.seconds = time.perf_counter() - start
    return summary


def format_table(summaries: list[ComponentSummary]) -> list[str]:
    """The model-check table: one line per component."""
    header = f"{'component':<16} {'configs':>7} {'depth':>11} {'states':>9} {'transitions':>12} {'time':>7}"
    lines = [f"  {header}  verdict"]
    for s in summaries:
        depth = f"{s.depth}/{s.depth_bound}" + (" fix" if s.complete else "")
        lines.append(
            f"  {s.component:<16} {s.configurations:>7} {depth:>11} {s.states:>9} {s.transitions:>12}"
            f" {s.seconds:>6.1f}s  {s.verdict}"
        )
    lines.append("  depth: deepest level with a new state / bound; fix: all configurations at a fixpoint")
    lines.append("  c1_race: configs = scenarios, states = distinct outcomes, transitions = schedules run,")
    lines.append("  depth = most scheduling choices in one schedule; every schedule of every scenario is run")
    return lines


def components_named(names: list[str]) -> list[ModelCheckedComponent]:
    """The components asked for (all when none is named); an unknown name is a ValueError."""
    unknown = [n for n in names if n not in MODEL_CHECKED]
    if unknown:
        raise ValueError(f"unknown component(s) {unknown}; known: {sorted(MODEL_CHECKED)}")
    return [MODEL_CHECKED[n] for n in names] if names else list(MODEL_CHECKED.values())
