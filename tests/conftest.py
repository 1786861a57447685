"""Shared test set-up: Hypothesis profiles and the fake clock fixture.

Profiles (select with ``HYPOTHESIS_PROFILE``): ``dev`` for ``make test``,
``verify`` for the larger budgets of ``make verify``, ``mutation`` (small) for
``make mutation``.  All are derandomized so that a CI run is reproducible; the
example database still keeps found failures (not under ``mutation``).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from spec.fake_fs import FakeFileSystem
from spec.fakes import FakeClock

settings.register_profile(
    "dev",
    max_examples=150,
    stateful_step_count=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "verify",
    max_examples=1500,
    stateful_step_count=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
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


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(100.0)


@pytest.fixture
def fs(clock: FakeClock) -> FakeFileSystem:
    """An in-memory filesystem on the fake clock (modules may define their own ``fs``)."""
    return FakeFileSystem(clock)
