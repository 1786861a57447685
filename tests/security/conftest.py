"""The security tier: black-box tests of the store on the real filesystem with a real second user (S1-S8).

The store runs in the test process; "the neighbour" is another local user, run as a child process
through ``setpriv --reuid=nobody --regid=nogroup --clear-groups`` when the run is root.  When no second
user can be had (not root, no ``setpriv``, no user ``nobody``), every test that needs one is skipped and
the skip reason says why.

The neighbour works in a sticky, world-writable directory made for the test under ``/tmp`` (as ``/tmp``
itself is): ``shared`` below.  Nothing sleeps; nothing depends on the machine's speed.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

NEIGHBOUR = "nobody"
NEIGHBOUR_GROUP = "nogroup"


def _why_no_second_user() -> str | None:
    if os.geteuid() != 0:
        return f"a second user needs root to switch to (running as uid {os.geteuid()})"
    if shutil.which("setpriv") is None:
        return "setpriv is not installed"
    try:
        pwd.getpwnam(NEIGHBOUR)
    except KeyError:
        return f"there is no user {NEIGHBOUR!r}"
    return None


NO_SECOND_USER = _why_no_second_user()
needs_second_user = pytest.mark.skipif(NO_SECOND_USER is not None, reason=f"no second user: {NO_SECOND_USER}")


def neighbour_uid() -> int:
    return pwd.getpwnam(NEIGHBOUR).pw_uid


def as_neighbour(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the Python ``code`` (with ``sys.argv[1:] == args``) as the second user; its output is returned."""
    command = [
        "setpriv",
        f"--reuid={NEIGHBOUR}",
        f"--regid={NEIGHBOUR_GROUP}",
        "--clear-groups",
        sys.executable,
        "-I",
        "-c",
        code,
        *args,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        raise AssertionError(f"the neighbour's step failed ({done.returncode}): {done.stderr}")
    return done


@pytest.fixture
def shared() -> Iterator[Path]:
    """A fresh sticky world-writable directory under /tmp (like /tmp itself), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="hicache-sec-", dir="/tmp"))
    os.chmod(path, 0o1777)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(autouse=True)
def _no_store_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stores here see only the settings the test gives."""
    for name in list(os.environ):
        if name.startswith(("HICACHE_FILE_", "SGLANG_HICACHE_FILE_BACKEND_")):
            monkeypatch.delenv(name)


def pytest_report_header() -> str:
    return f"security tier: second user {'unavailable: ' + NO_SECOND_USER if NO_SECOND_USER else NEIGHBOUR}"
