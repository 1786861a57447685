"""A new user's first hour with the oracle (issue 23): the README's install line, in a fresh venv, in a
project with its own ``spec.py``, then the CLI and ``check()`` on a correct and a buggy class of theirs,
and the reproduction file run on its own.

The install command is the one line under the README's ``<!-- install`` marker, run as written with
the checkout (a copy of its sources, so that the build writes nothing here), the wheel built from it,
or ``-e``, in place of its ``/path/to/...``.  Offline and fast: pip gets ``--no-index
--no-build-isolation`` and the fresh venv sees the locked Hypothesis, pytest and setuptools of this
interpreter through a ``.pth`` of links (the machinery of ``test_installed_wheel.py``), so the
``[oracle]`` extra resolves to them.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

from tests.integration.test_installed_wheel import ROOT, RUNTIME, _copy_sources, _link_runtime, _run

README = ROOT / "README.md"
CHECKOUT = "/path/to/hicache-reference"

# The user's own cache: SEMANTICS M's hard TTL, in their names for nothing but the class.
CACHE = """import time


class Cache:
    def __init__(self, ttl_seconds, clock=time.monotonic):
        self.ttl, self.clock, self.born = ttl_seconds, clock, {}

    def _live(self, key, now):
        born = self.born.get(key)
        return born is not None and (self.ttl == -1 or now - born <= self.ttl)

    def add(self, key):
        now = self.clock()
        if not self._live(key, now):
            self.born[key] = now  # a live key keeps its birth

    def contains(self, key):
        return self._live(key, self.clock())


class Buggy(Cache):
    def _live(self, key, now):  # dead at exactly birth + ttl: M2 says alive
        born = self.born.get(key)
        return born is not None and (self.ttl == -1 or now - born < self.ttl)
"""

# The cache validates none of its input: B1 is declared left out (O3), as the README says.
USER_TEST = """from hicache_spec.oracle import check


def test_my_cache_follows_the_spec():
    result = check("metadata-cache", "mycache:Cache", max_examples=40, steps=10, leave_out=["B1"])
    assert result.passed, result.summary()


def test_the_oracle_catches_my_bug():
    result = check("metadata-cache", "mycache:Buggy", max_examples=300, steps=15, leave_out=["B1"])
    assert not result.passed and result.clauses[0] == "M2", result.summary()
"""


def install_line() -> str:
    """The one command under the README's install marker."""
    text = README.read_text()
    found = re.search(r"<!-- install[^>]*-->\s*```sh\n(?P<line>[^\n]+)\n```", text)
    assert found, "the README has no install block under <!-- install ... -->"
    return found["line"]


def test_the_readme_install_line_names_a_checkout_and_a_wheel() -> None:
    line = install_line()
    command, _, comment = line.partition("#")
    assert shlex.split(command) == ["pip", "install", f"{CHECKOUT}[oracle]"], line
    assert re.search(r"'/path/to/dist/hicache_reference-[\d.]+-py3-none-any\.whl\[oracle\]'", comment), line
    # the first screen: within the README's first 30 lines
    assert line in README.read_text().splitlines()[:30]


def _commands(source: Path, wheel: Path) -> dict[str, list[str]]:
    """The README's command, per form, with the user's paths in."""
    command, _, comment = install_line().partition("#")
    words = shlex.split(command)
    [wheel_argument] = re.findall(r"'([^']+\.whl\[oracle\])'", comment)
    version = re.search(r"hicache_reference-([\d.]+)-", wheel_argument)
    assert version and version[1] in wheel.name, (wheel_argument, wheel.name)  # the README's version
    checkout = [w.replace(CHECKOUT, str(source)) for w in words]
    return {
        "checkout": checkout,
        "wheel": [*words[:-1], f"{wheel}[oracle]"],
        "editable": [*checkout[:-1], "-e", checkout[-1]],
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(the copied checkout, the wheel built from it, the folder of runtime links)."""
    tmp = tmp_path_factory.mktemp("newcomer")
    source = _copy_sources(tmp / "source")
    dist = tmp / "dist"
    build = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(source),
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--quiet",
            "-w",
            str(dist),
        ],
        tmp,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    [wheel] = dist.glob("hicache_reference-*.whl")
    runtime = _link_runtime(tmp / "runtime", (*RUNTIME, "setuptools"))  # a build from source needs it
    return source, wheel, runtime


@pytest.mark.verify_tier  # a venv, a build and pip per form, then the oracle: 20-40 s each
@pytest.mark.clauses("M2")
@pytest.mark.parametrize("form", ["checkout", "wheel", "editable"])
def test_a_new_user_installs_with_the_readme_line_and_checks_their_cache(
    form: str, built: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    source, wheel, runtime = built
    venv = tmp_path / "venv"
    created = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path)
    assert created.returncode == 0, created.stderr
    python, script = venv / "bin" / "python", venv / "bin" / "hicache-oracle"
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], tmp_path)
    (Path(purelib.stdout.strip()) / "oracle_runtime.pth").write_text(f"{runtime}\n")

    pip, install, *arguments = _commands(source, wheel)[form]
    assert (pip, install) == ("pip", "install")
    offline = ["--no-index", "--no-build-isolation", "--quiet", "--disable-pip-version-check"]
    done = _run(
        [sys.executable, "-m", "pip", "--python", str(python), install, *offline, *arguments], tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr

    project = tmp_path / "project"
    project.mkdir()
    (project / "spec.py").write_text('WHOSE = "mine"\n')
    (project / "mycache.py").write_text(CACHE)
    (project / "test_mine.py").write_text(USER_TEST)

    no_validation = ["--leave-out", "B1"]  # the user's cache validates nothing (O3)
    passed = _run(
        [
            str(script),
            "metadata-cache",
            "mycache:Cache",
            "--max-examples",
            "40",
            "--steps",
            "10",
            *no_validation,
        ],
        project,
    )
    assert passed.returncode == 0 and passed.stdout.startswith("PASS"), passed.stdout + passed.stderr

    repro = project / "test_repro.py"
    failed = _run(
        [
            str(script),
            "metadata-cache",
            "mycache:Buggy",
            "--max-examples",
            "300",
            "--steps",
            "15",
            "--repro",
            str(repro),
            *no_validation,
        ],
        project,
    )
    assert failed.returncode == 1 and "breaks: M2" in failed.stdout, failed.stdout + failed.stderr

    pytest_ = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    alone = _run([*pytest_, str(repro)], project)
    assert alone.returncode == 1 and "1 failed" in alone.stdout, alone.stdout + alone.stderr
    fixed = _run(["env", "HICACHE_ORACLE_TARGET=mycache:Cache", *pytest_, str(repro)], project)
    assert fixed.returncode == 0 and "1 passed" in fixed.stdout, fixed.stdout + fixed.stderr

    own = _run([*pytest_, "test_mine.py"], project)  # check() in the user's own pytest
    assert own.returncode == 0 and "2 passed" in own.stdout, own.stdout + own.stderr
    mine = _run([str(python), "-c", "import spec; print(spec.WHOSE)"], project)
    assert mine.stdout.strip() == "mine", mine.stdout + mine.stderr
