"""pytest plugin behind the conformance report.

* registers the ``clauses(*ids)`` marker: the docs/SEMANTICS.md clauses a test checks;
* with ``--conformance-json=PATH``, writes one record per test: its node ID,
  clauses, outcome, duration and the figures it recorded with pytest's
  ``record_property`` (examples, steps, distinct states, ...).

Loaded with ``-p spec.pytest_plugin`` (see pyproject.toml).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from spec.clauses import clause_ids

__all__: list[str] = []

_RECORDS = pytest.StashKey[dict[str, dict[str, Any]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--conformance-json",
        default=None,
        help="write per-test clause coverage and figures to this JSON file",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_RECORDS] = {}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    known = clause_ids()
    for item in items:
        for mark in item.iter_markers("clauses"):
            unknown = [c for c in mark.args if c not in known]
            if unknown:
                raise pytest.UsageError(f"{item.nodeid}: unknown clause IDs {unknown}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report: pytest.TestReport = yield
    records = item.config.stash[_RECORDS]
    clauses = sorted({c for mark in item.iter_markers("clauses") for c in mark.args})
    record = records.setdefault(
        item.nodeid,
        {"nodeid": item.nodeid, "clauses": clauses, "outcome": "passed", "figures": {}},
    )
    if report.failed:
        record["outcome"] = "failed"
    elif report.skipped and record["outcome"] == "passed":
        record["outcome"] = "skipped"
    if report.when == "call":
        record["seconds"] = round(report.duration, 3)
        record["figures"].update({k: v for k, v in report.user_properties})
    return report


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption("--conformance-json")
    if path:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        records = list(session.config.stash[_RECORDS].values())
        target.write_text(json.dumps(records, indent=1, sort_keys=True))
