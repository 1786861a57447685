"""The conformance report: per component and per clause, what checked it, and the verdict.

Inputs are the per-test records written by ``spec.conformance.pytest_plugin`` (CrossHair's
contract checks among them: ``tests/contracts/test_crosshair.py``, whose tests
record the contracts they checked) and the tool steps ``spec.conformance.verify`` ran.  A
clause no check names is printed as UNCHECKED, never left out.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .clauses import CLAUSES, COMPONENT_OF_LETTER

__all__ = ["StepResult", "render_report"]

# The package's name: "spec" in the repository, "hicache_spec" installed (run as __main__ too).
_PACKAGE = (__package__ or __name__).partition(".")[0]


@dataclass(frozen=True)
class StepResult:
    """One tool run of ``make verify``."""

    name: str
    returncode: int
    seconds: float
    output: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


FIGURE_KEYS = ("examples", "steps", "distinct_states")
# Which tests a clause's "checks:" line names first: the failed ones, then the broadest kinds of check.
TIER_ORDER = ("stateful", "modelcheck", "concurrency", "integration", "oracle", "unit")
NAMED_CHECKS = 3


def _tier(nodeid: str) -> str:
    parts = nodeid.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "tests" else parts[0]


def _summarize_tests(records: Iterable[dict[str, Any]]) -> list[str]:
    by_tier: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_tier[_tier(record["nodeid"])].append(record)
    parts = []
    for tier, group in sorted(by_tier.items()):
        outcomes = Counter(r["outcome"] for r in group)
        text = f"{tier} {outcomes['passed']}/{len(group)} tests"
        text += f" ({outcomes['failed']} FAILED)" if outcomes["failed"] else ""
        text += f" ({outcomes['skipped']} skipped)" if outcomes["skipped"] else ""
        examples, steps, states = (sum(int(r["figures"].get(k, 0)) for r in group) for k in FIGURE_KEYS)
        if examples:
            text += f" [{examples} examples, {steps} steps, {states} states]"
        for key in sorted({k for r in group for k in r["figures"] if k not in (*FIGURE_KEYS, "seconds")}):
            text += f" [{key} {sum(float(r['figures'][key]) for r in group if key in r['figures']):g}]"
        parts.append(text)
    return parts


def _named_checks(records: list[dict[str, Any]]) -> list[str]:
    """Up to ``NAMED_CHECKS`` test names (parametrizations folded), failed ones first; then '+N more'."""
    ranked: dict[str, tuple[int, int, str]] = {}
    for record in records:
        path, _, name = record["nodeid"].partition("::")
        tier = _tier(record["nodeid"])
        label = f"{path.rsplit('/', 1)[-1].removesuffix('.py')}::{name.split('[', 1)[0]}"
        order = TIER_ORDER.index(tier) if tier in TIER_ORDER else len(TIER_ORDER)
        rank = (0 if record["outcome"] == "failed" else 1, order, label)
        ranked[label] = min(ranked.get(label, rank), rank)
    names = [label for _failed, _order, label in sorted(ranked.values())]
    shown = [f"checks: {label}" for label in names[:NAMED_CHECKS]]
    if len(names) > NAMED_CHECKS:
        shown.append(f"        ... and {len(names) - NAMED_CHECKS} more tests")
    return shown


def _modelcheck_lines(summaries: list[dict[str, Any]]) -> list[str]:
    """The model-check table, from ``python -m spec.modelcheck --json``."""
    lines = [f"\nModel check (bounded exhaustive refinement, python -m {_PACKAGE}.modelcheck)"]
    if not summaries:
        return [*lines, "  not run"]
    header = f"{'component':<16} {'configs':>7} {'depth':>11} {'states':>9} {'transitions':>12} {'time':>7}"
    lines.append(f"  {header}  verdict")
    for s in summaries:
        depth = f"{s['depth']}/{s['depth_bound']}" + (" fix" if s["complete"] else "")
        lines.append(
            f"  {s['component']:<16} {s['configurations']:>7} {depth:>11} {s['states']:>9}"
            f" {s['transitions']:>12} {s['seconds']:>6.1f}s  {s['verdict']}"
        )
    lines.append("  depth: deepest level with a new state / bound; fix: all configurations at a fixpoint")
    if any(s.get("component") == "c1_race" for s in summaries):
        lines.append("  c1_race: every schedule of 2 threads at marked points; transitions = schedules run")
    return lines


def _mutation_line(mutation: dict[str, Any] | None) -> list[str]:
    if not mutation:
        return ["\nMutation score (make mutation): not recorded yet"]
    killed, total = mutation["killed"], mutation["total"]
    score = 100.0 * killed / total if total else 0.0
    text = f"  {killed}/{total} killed ({score:.1f}%) over {', '.join(mutation.get('paths', []))}"
    if mutation.get("equivalent"):
        text += (
            f"; {mutation['equivalent']} survivors are equivalent mutants:"
            f" {mutation.get('score_without_equivalent', '?')}% of the killable"
        )
    text += f" with {mutation.get('tool', '?')}, recorded {mutation.get('recorded', '?')}"
    return ["\nMutation score (last recorded by make mutation; survivors in docs/MUTATION.md)", text]


def render_report(
    records: list[dict[str, Any]],
    steps: list[StepResult],
    seconds: float,
    *,
    modelcheck: list[dict[str, Any]] | None = None,
    linearizability: list[dict[str, Any]] | None = None,
    mutation: dict[str, Any] | None = None,
) -> tuple[str, bool]:
    """Return the report text and whether everything passed."""
    tests_by_clause: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        for clause in record["clauses"]:
            tests_by_clause[clause].append(record)
    checked_by_clause: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for summary in modelcheck or []:
        for clause in summary["clauses"]:
            checked_by_clause[clause].append(summary)

    lines = ["", "=" * 100, "CONFORMANCE REPORT (clauses of docs/SEMANTICS.md)", "=" * 100]
    counts: Counter[str] = Counter()
    component = None
    for clause in CLAUSES:
        if clause.component != component:
            component = clause.component
            lines.append(f"\n{component}")
        tests, model_checked = tests_by_clause.get(clause.id, []), checked_by_clause.get(clause.id, [])
        failed = any(r["outcome"] == "failed" for r in tests) or any(
            m["verdict"] == "FAIL" for m in model_checked
        )
        passed = any(r["outcome"] == "passed" for r in tests) or bool(model_checked)
        status = "FAIL" if failed else "PASS" if passed else "UNCHECKED"
        counts[status] += 1
        lines.append(f"  {clause.id:<3} {status:<9} {clause.title}")
        evidence = _summarize_tests(tests) + _named_checks(tests)
        evidence += [
            f"model check {m['component']} {m['verdict']} [{m['states']} states, {m['transitions']}"
            f" transitions, depth {m['depth']}/{m['depth_bound']}{', fixpoint' if m['complete'] else ''}]"
            for m in model_checked
        ]
        lines.extend(f"                {item}" for item in evidence)

    if modelcheck is not None:
        lines.extend(_modelcheck_lines(modelcheck))
    if linearizability is not None:
        lines.append(f"\nLinearizability (real-thread histories, python -m {_PACKAGE}.linearizability)")
        runs = [
            f"  {'PASS' if r['passed'] else 'FAIL':<5} {r['subject']}: {r['summary']}"
            for r in linearizability
        ]
        lines.extend(runs or ["  not run"])
    lines.extend(_mutation_line(mutation))

    lines.append("\nTool steps")
    lines.extend(f"  {'PASS' if step.ok else 'FAIL':<9} {step.name} ({step.seconds:.1f}s)" for step in steps)
    untagged = [r for r in records if not r["clauses"]]
    failed_untagged = [r["nodeid"] for r in untagged if r["outcome"] == "failed"]
    lines.append(f"\nTests without a clause tag: {len(untagged)} ({len(failed_untagged)} failed)")
    lines.extend(f"  FAIL {nodeid}" for nodeid in failed_untagged)
    evidenced = set(tests_by_clause) | set(checked_by_clause)
    unchecked = [c.id for c in CLAUSES if c.id not in evidenced]
    contracts = sum(int(r["figures"].get("contracts", 0)) for r in records)
    ok = counts["FAIL"] == 0 and all(s.ok for s in steps) and not failed_untagged
    lines.append(
        f"\nClauses: {counts['PASS']} PASS, {counts['FAIL']} FAIL, {counts['UNCHECKED']} UNCHECKED"
        f" of {len(CLAUSES)}; {len(records)} tests; {contracts} contracts; {seconds:.0f}s"
    )
    if unchecked:
        by_component = sorted({COMPONENT_OF_LETTER[c[0]] for c in unchecked})
        lines.append(f"Unchecked ({', '.join(by_component)}): {' '.join(unchecked)}")
    lines.append(f"VERDICT: {'PASS' if ok else 'FAIL'}")
    return "\n".join(lines), ok
