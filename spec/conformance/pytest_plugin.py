"""pytest plugin behind the conformance report.

* registers the ``clauses(*ids)`` marker: the docs/SEMANTICS.md clauses a test checks;
* with ``--conformance-json=PATH``, writes one record per test: its node ID,
  clauses, outcome, duration and the figures it recorded with pytest's
  ``record_property`` (examples, steps, distinct states, ...).

The records are the same with one process or with pytest-xdist workers: the
clause IDs travel on each test's report (xdist serializes a report's fields),
and the records are kept and written by the controller only.

Loaded with ``-p spec.conformance.pytest_plugin`` (see pyproject.toml).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .clauses import CLAUSE_IDS

__all__: list[str] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--conformance-json",
        default=None,
        help="write per-test clause coverage and figures to this JSON file",
    )


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--conformance-json")
    if path and not hasattr(config, "workerinput"):  # an xdist worker reports to the controller instead
        config.pluginmanager.register(_Recorder(Path(path)), "hicache-conformance-recorder")


def _clauses(item: pytest.Item) -> list[str]:
    return sorted({c for mark in item.iter_markers("clauses") for c in mark.args})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        unknown = [c for c in _clauses(item) if c not in CLAUSE_IDS]
        if unknown:
            raise pytest.UsageError(f"{item.nodeid}: unknown clause IDs {unknown}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Attach the test's clause IDs to its report, where the markers are known (in a worker, if any)."""
    report: pytest.TestReport = yield
    report.hicache_clauses = _clauses(item)  # type: ignore[attr-defined]  # an extra field, which xdist carries
    return report


class _Recorder:
    """One record per test node, built from its reports (setup, call, teardown)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: dict[str, dict[str, Any]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        clauses = list(getattr(report, "hicache_clauses", []))
        new = {"nodeid": report.nodeid, "clauses": clauses, "outcome": "passed", "figures": {}}
        record = self.records.setdefault(report.nodeid, new)
        if report.failed:
            record["outcome"] = "failed"
        elif report.skipped and record["outcome"] == "passed":
            record["outcome"] = "skipped"
        if report.when == "call":
            record["seconds"] = round(report.duration, 3)
            record["figures"].update({k: v for k, v in report.user_properties})

    def pytest_sessionfinish(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        records = sorted(self.records.values(), key=lambda r: r["nodeid"])
        self.path.write_text(json.dumps(records, indent=1, sort_keys=True))
