"""The locked toolchain: requirements-dev.lock satisfies the dev extra, and the project's .venv holds
exactly the versions it names (issue 10: a fresh machine installs what was tested).

The second test needs the Makefile's own .venv: run elsewhere (a user's environment), it is skipped with
that reason printed.
"""

from __future__ import annotations

import re
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11 on")

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements-dev.lock"
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;\\]+)\s*(?:;(?P<marker>[^\\]+))?")
# What a venv holds besides the locked packages: the installer itself and this project.  setuptools is
# locked (the dev extra names it: the installed-wheel test builds with it), so it is compared too.
NOT_LOCKED = {"pip", "wheel", "hicache-reference"}


def pins(text: str) -> dict[str, str]:
    """The locked version of each package that applies to this interpreter (markers evaluated)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        m = PIN.match(line)
        if m and (m["marker"] is None or Marker(m["marker"].strip()).evaluate()):
            found[canonicalize_name(m["name"])] = m["version"]
    return found


def test_pins_read_names_versions_and_markers() -> None:
    text = (
        "hypothesis==6.168.5 ; python_full_version < '3.0' \\\n    --hash=sha256:00\n"
        "hypothesis==6.170.17 ; python_full_version >= '3.0' \\\n"
        "Typing_Extensions==4.16.0 \\\n"
        "    # via mypy\n"
    )
    assert pins(text) == {"hypothesis": "6.170.17", "typing-extensions": "4.16.0"}


def test_the_lock_file_satisfies_the_dev_extra_and_hashes_every_pin() -> None:
    text = LOCK.read_text()
    locked = pins(text)
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["dev"]
    for spec in map(Requirement, extra):
        name = canonicalize_name(spec.name)
        assert name in locked, f"{spec.name} of the dev extra is not in {LOCK.name}: run make lock"
        assert spec.specifier.contains(locked[name], prereleases=True), (
            f"{LOCK.name} pins {spec.name}=={locked[name]}, outside the dev extra's {spec}: run make lock"
        )
    entries = [block for block in re.split(r"\n(?=\S)", text) if PIN.match(block)]
    unhashed = [block.split()[0] for block in entries if "--hash=sha256:" not in block]
    assert entries and not unhashed, f"pins without hashes: {unhashed}"


def test_the_project_venv_holds_exactly_the_locked_versions() -> None:
    venv = ROOT / ".venv"
    if Path(sys.prefix).resolve() != venv.resolve():
        pytest.skip(f"not running in the Makefile's {venv} (sys.prefix is {sys.prefix}): nothing to compare")
    if (venv / "bin" / "mutmut").exists() or (venv / "bin" / "uv").exists():
        pytest.skip("this .venv also has the mutation or lock extra (make mutation / make lock added it)")
    # The venv's own site-packages only: once setuptools is imported (the build hook), its vendored
    # packages' metadata (setuptools/_vendor) is on sys.path too, and is not what pip installed.
    site = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    installed = {
        canonicalize_name(d.metadata["Name"]): d.version
        for d in metadata.distributions(path=site)
        if canonicalize_name(d.metadata["Name"]) not in NOT_LOCKED
    }
    assert installed == pins(LOCK.read_text())
