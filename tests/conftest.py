"""Shared test set-up: Hypothesis profiles and the fake clock fixture.

Profiles (select with ``HYPOTHESIS_PROFILE``): ``dev`` for ``make test``,
``verify`` for the larger budgets of ``make verify``, ``mutation`` (small) for
``make mutation``.  All are derandomized so that a CI run is reproducible, and so
they keep no example database (in Hypothesis, ``derandomize=True`` implies
``database=None``): a derandomized run finds the same failure again by itself.

Knobs for a larger or a distributed run (docs/VERIFY.md):

* ``HICACHE_VERIFY_EXAMPLES`` / ``HICACHE_VERIFY_STEPS``: examples per test and steps per stateful
  example of the ``verify`` profile (default 1500 and 60);
* ``HICACHE_HYPOTHESIS_DB``: a directory for Hypothesis's example database, for example on storage
  that several machines share.  It turns derandomization off: each run and each machine then searches
  new ground with fresh random seeds, and every failure found is saved there and replayed first by
  every later run that points at the same directory.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from spec.fake_fs import FakeFileSystem
from spec.fakes import FakeClock


def _count(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise pytest.UsageError(f"{name}={raw!r}: expected a whole number >= 1")
    return int(raw)


# The shared example database when HICACHE_HYPOTHESIS_DB names one; else derandomized, with none.
_DB = os.environ.get("HICACHE_HYPOTHESIS_DB", "")
_DATABASE = DirectoryBasedExampleDatabase(_DB) if _DB else None

settings.register_profile(
    "dev",
    max_examples=100,
    stateful_step_count=40,
    deadline=None,
    derandomize=_DATABASE is None,
    suppress_health_check=[HealthCheck.too_slow],
    database=_DATABASE,
)
settings.register_profile(
    "verify",
    max_examples=_count("HICACHE_VERIFY_EXAMPLES", 1500),
    stateful_step_count=_count("HICACHE_VERIFY_STEPS", 60),
    deadline=None,
    derandomize=_DATABASE is None,
    suppress_health_check=[HealthCheck.too_slow],
    database=_DATABASE,
)
settings.register_profile(
    # `make mutation` (issue 6): small and derandomized, so each mutant's verdict is reproducible and cheap
    "mutation",
    max_examples=40,
    stateful_step_count=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


VERIFY_TIER = os.environ.get("HYPOTHESIS_PROFILE") == "verify"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``verify_tier`` (end-to-end runs of the verify tooling itself: real CrossHair with a
    budget of CPU seconds, pytest in subprocesses; and catalogue variants slow to find) run in
    ``make verify`` only; ``make test`` skips them and prints why, to stay a quick suite."""
    if VERIFY_TIER:
        return
    skip = pytest.mark.skip(
        reason="verify tier: too slow for make test (an end-to-end run of the verify tooling, or a"
        " variant slow to find); run by make verify (HYPOTHESIS_PROFILE=verify)"
    )
    for item in items:
        if item.get_closest_marker("verify_tier") is not None:
            item.add_marker(skip)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(100.0)


@pytest.fixture
def fs(clock: FakeClock) -> FakeFileSystem:
    """An in-memory filesystem on the fake clock (modules may define their own ``fs``)."""
    return FakeFileSystem(clock)
