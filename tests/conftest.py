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
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from spec import PACKAGE
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem

# The conformance plugin (clause markers, --conformance-json), named from the package's name (and not
# imported here: pytest must import it first, to rewrite its asserts).
pytest_plugins = [f"{PACKAGE}.conformance.pytest_plugin"]

ROOT = Path(__file__).resolve().parent.parent


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
    max_examples=60,
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
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
settings.load_profile(PROFILE)

VERIFY_TIER = PROFILE == "verify"

# The directories whose tests carry a tier marker of their own (docs/ARCHITECTURE.md, "The test tiers").
DIRECTORY_MARKERS = {"oracle": "oracle", "tooling": "tooling"}

_VERIFY_ONLY = (
    "verify tier: too slow for make test (an end-to-end run of the verify tooling, or a variant slow to"
    " find); run by make verify (HYPOTHESIS_PROFILE=verify)"
)


def _slow_reason(mark: pytest.Mark) -> str:
    why = mark.args[0] if mark.args else mark.kwargs.get("reason", "")
    if not why:
        return _VERIFY_ONLY
    return f"slow, verify tier: {why}; run by make verify (HYPOTHESIS_PROFILE=verify)"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow",
        action="store_true",
        help="run the slow tests under any Hypothesis profile (make stress: every thread test, each run)",
    )


@pytest.hookimpl(tryfirst=True)  # before -m selects: `-m "not slow"` sees the markers added here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tiers (docs/ARCHITECTURE.md):

    * a test under ``tests/oracle/`` or ``tests/tooling/`` carries the ``oracle`` or ``tooling`` marker;
    * ``verify_tier`` (end-to-end runs of the verify tooling itself: real CrossHair with a budget of CPU
      seconds, pytest in subprocesses) implies ``slow``;
    * ``slow`` tests (``@pytest.mark.slow("why")``: the oracle's searches, machines checking themselves,
      anything over a few seconds) run in ``make verify`` only: under the ``dev`` profile (``make
      test``) they are skipped, printing why.  The ``mutation`` profile runs the ``slow`` tests of its
      selections but not the ``verify_tier`` ones, and so does ``--run-slow`` (``make stress``).  So
      ``make test`` runs exactly ``-m "not slow"``.
    """
    for item in items:
        parts = item.nodeid.split("/")
        if len(parts) > 2 and parts[0] == "tests" and parts[1] in DIRECTORY_MARKERS:
            item.add_marker(DIRECTORY_MARKERS[parts[1]])
        verify_only = item.get_closest_marker("verify_tier") is not None
        slow = item.get_closest_marker("slow")
        if verify_only and slow is None:
            item.add_marker(pytest.mark.slow)
        if VERIFY_TIER:
            continue
        if verify_only:
            item.add_marker(pytest.mark.skip(reason=_VERIFY_ONLY))
        elif slow is not None and PROFILE == "dev" and not config.getoption("--run-slow"):
            item.add_marker(pytest.mark.skip(reason=_slow_reason(slow)))


@pytest.fixture(scope="session")
def engine_storage() -> Iterator[ModuleType]:
    """The engine release's ``sglang.srt.mem_cache.hicache_storage`` from its wheel, loaded once for the
    session under the engine's own dotted names (skipped, saying why, without torch or the wheel)."""
    from benchmarks import engine_wheel

    try:
        module = engine_wheel.load_engine_storage()
    except ImportError as error:
        pytest.skip(f"the engine's hicache_storage needs torch: {error}")
    except (engine_wheel.WheelUnavailable, LookupError) as error:
        pytest.skip(f"the engine's storage modules cannot be loaded: {error}")
    try:
        yield module
    finally:
        engine_wheel.unload_engine_storage()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(100.0)


@pytest.fixture
def fs(clock: FakeClock) -> FakeFileSystem:
    """An in-memory filesystem on the fake clock (modules may define their own ``fs``)."""
    return FakeFileSystem(clock)


RunPytest = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_pytest() -> RunPytest:
    """pytest in a fresh process: ``run_pytest(where, *args, env=None, ini="[pytest]\\n")``.

    ``where`` is a test file or a directory of them; a ``pytest.ini`` holding ``ini`` is written beside
    it and is the run's only configuration (the project's own options and plugins do not apply) and its
    root directory.  The process starts from the project root, so the project's packages import; ``args``
    come before ``where``, ``env`` is added to this process's environment.  Stdout and stderr are
    captured as text; the exit status is the caller's to check."""

    def run(
        where: Path, *args: str, env: Mapping[str, str] | None = None, ini: str = "[pytest]\n"
    ) -> subprocess.CompletedProcess[str]:
        directory = where if where.is_dir() else where.parent
        config = directory / "pytest.ini"
        config.write_text(ini)
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", str(config)]
        return subprocess.run(
            [*command, "--rootdir", str(directory), *args, str(where)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, **(env or {})},
            check=False,
        )

    return run
