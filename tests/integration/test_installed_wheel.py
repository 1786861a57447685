"""The installed wheel ships the oracle as ``hicache_spec``, never as ``spec`` (issue 11 item 8).

``pip install 'hicache-reference[oracle]'`` used to put a top-level ``spec`` package into
site-packages, so in a project with its own ``spec`` package ``python -m spec.oracle`` failed (or the
project's ``spec`` was shadowed).  The build hook (tools/build_hooks.py) writes ``spec/`` into the wheel
as ``hicache_spec/``, rewriting the package's references to itself; the repository and its editable
install keep ``spec``.

The cheap tests check the rewrite on samples and on every module of ``spec/``.  The ``verify_tier``
tests build the wheel with the locked setuptools (offline, ``--no-build-isolation``), install it with
``--no-deps`` into a fresh venv that sees only Hypothesis, pytest and their dependencies (linked from
this interpreter's site-packages one distribution at a time, so this checkout, which the editable
install puts on the path, stays out of sight), check the wheel's file list, and run
``python -m hicache_spec.oracle``, the ``hicache-oracle`` script and a reproduction file in a project
that has its own ``spec`` package.
"""

from __future__ import annotations

import doctest
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tokenize
import zipfile
from pathlib import Path

import pytest

import spec._rename
import tools.build_hooks
from tools.build_hooks import INSTALLED, RewriteError, own_modules, rewrite_source

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec"
TIMEOUT = 300.0  # seconds, per subprocess; each takes a few
# What the oracle extra brings (Hypothesis, pytest) and what they need, for the fresh venv.
RUNTIME = (
    "hypothesis",
    "attrs",
    "sortedcontainers",
    "exceptiongroup",
    "pytest",
    "pluggy",
    "iniconfig",
    "packaging",
    "tomli",
    "pygments",
)
# The user's own package named spec, which must stay theirs.
USER_SPEC = 'WHOSE = "the project\'s own spec package"\n'

MODULES = own_modules(SPEC)


# -- the rewrite, on samples ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("from spec.oracle import check\n", "from hicache_spec.oracle import check\n"),
        ("from spec import clauses, fakes\n", "from hicache_spec import clauses, fakes\n"),
        (
            "import spec.variants.metadata_cache as v\n",
            "import hicache_spec.variants.metadata_cache as v\n",
        ),
        ("import os, spec.fakes as f\n", "import os, hicache_spec.fakes as f\n"),
        (
            'm = importlib.import_module("spec.machines.file_store")\n',
            'm = importlib.import_module("hicache_spec.machines.file_store")\n',
        ),
        (
            'm = importlib.import_module(f"spec.modelcheck.{name}")\n',
            'm = importlib.import_module(f"hicache_spec.modelcheck.{name}")\n',
        ),
        (
            'lines = ["from spec.oracle import machine_for", "x"]\n',
            'lines = ["from hicache_spec.oracle import machine_for", "x"]\n',
        ),
        (
            '"""Usage:\n\n    python -m spec.oracle metadata-cache a.b:C\n"""\n',
            '"""Usage:\n\n    python -m hicache_spec.oracle metadata-cache a.b:C\n"""\n',
        ),
        (
            'prog = "python -m spec.verify"  # spec.verify stays in a comment\n',
            'prog = "python -m hicache_spec.verify"  # spec.verify stays in a comment\n',
        ),
    ],
)
def test_references_to_the_package_are_renamed(before: str, after: str) -> None:
    assert rewrite_source(before, MODULES) == after


@pytest.mark.parametrize(
    "source",
    [
        "spec.step(state, op)\nself.spec.live()\nspec = make()\n",  # a variable named spec
        "from other import spec\nfrom other.spec import x\nimport a.spec as b\n",  # someone else's spec
        # not a module path of the package
        '"the spec answers", "spec.snapshot()", "my_spec.oracle", "hicache_spec.oracle"\n',
        "from . import spec_helpers\nfrom .machines import x\n",  # relative imports need nothing
    ],
)
def test_everything_else_is_left_alone(source: str) -> None:
    assert rewrite_source(source, MODULES) == source


@pytest.mark.parametrize("source", ["import spec\n", "import spec.oracle\n", "import os, spec.fakes\n"])
def test_an_import_that_would_bind_another_name_is_refused(source: str) -> None:
    with pytest.raises(RewriteError, match="would bind"):
        rewrite_source(source, MODULES)


def _references(source: str, package: str) -> list[str]:
    """``package.<own module>`` in the code and strings of ``source`` (comments left out).

    A string's ``package.{`` counts too: a module path built at run time (``f"spec.{name}"``) that the
    rewrite, which renames only the package's own module names, would leave pointing at ``spec``.
    """
    pattern = re.compile(rf"(?<![\w.]){package}\.(?:(?:{'|'.join(sorted(MODULES))})\b|\{{)")
    lines = source.splitlines()
    found = []
    for token in tokenize.generate_tokens(iter(source.splitlines(keepends=True)).__next__):
        if token.type == tokenize.COMMENT:
            continue
        if token.type == tokenize.NAME and token.string == package:
            line = lines[token.start[0] - 1]
            if pattern.match(line, token.start[1]) and re.match(r"\s*(from|import)\b", line):
                found.append(f"{token.start[0]}: {line.strip()}")
        elif token.type == tokenize.STRING or tokenize.tok_name[token.type].endswith("STRING_MIDDLE"):
            found += [f"{token.start[0]}: {m[0]}" for m in pattern.finditer(token.string)]
    return found


def test_every_module_of_spec_is_rewritten_to_the_installed_name() -> None:
    """No module of the shipped package still refers to ``spec.<its own module>``, and each compiles."""
    files = sorted(SPEC.rglob("*.py"))
    assert len(files) > 40, files
    left: dict[str, list[str]] = {}
    for path in files:
        source = path.read_text(encoding="utf-8")
        rewritten = rewrite_source(source, MODULES)
        compile(rewritten, str(path), "exec")
        if remaining := _references(rewritten, "spec"):
            left[str(path.relative_to(ROOT))] = remaining
    assert not left, left
    # and the rewrite is what reaches the reproduction files that import the oracle
    repro = rewrite_source((SPEC / "oracle" / "_repro.py").read_text(encoding="utf-8"), MODULES)
    assert f'"from {INSTALLED}.oracle import machine_for"' in repro


def test_the_rewrite_docstring_examples_hold() -> None:
    result = doctest.testmod(spec._rename)
    assert result.attempted > 0 and result.failed == 0
    # the build uses the same file (loaded by its path: setuptools imports the hook without the checkout)
    assert tools.build_hooks.rewrite_source.__code__.co_filename == spec._rename.__file__


def test_an_editable_install_loads_hicache_spec_rewritten_beside_a_project_spec(tmp_path: Path) -> None:
    """``pip install -e`` maps ``hicache_spec`` onto the folder ``spec/``; a project's own ``spec.py``
    used to capture the modules' ``spec.*`` imports (``'spec' is not a package``).  The same mapping,
    made by hand here (a path finder for ``hicache_spec`` onto this checkout's folder), must import the
    oracle whole under its own name, the project's ``spec`` untouched."""
    (tmp_path / "spec.py").write_text(USER_SPEC)
    (tmp_path / "editable_like.py").write_text(
        "import importlib.util, sys\n"
        f"init = {str(SPEC / '__init__.py')!r}\n"
        f"found = importlib.util.spec_from_file_location({INSTALLED!r}, init,"
        f" submodule_search_locations=[{str(SPEC)!r}])\n"
        "module = importlib.util.module_from_spec(found)\n"
        f"sys.modules[{INSTALLED!r}] = module\n"
        "found.loader.exec_module(module)\n"
    )
    code = (
        "import editable_like, spec, sys\n"
        "from hicache_spec.oracle import check\n"
        "result = check('metadata-cache', 'hicache.metadata_cache:MetadataCache', max_examples=3, steps=3)\n"
        "assert result.verdict == 'PASS', result.summary()\n"
        "assert spec.WHOSE.startswith('the project'), spec.__file__\n"
        "assert [m for m in sys.modules if m.startswith('spec.')] == [], sorted(sys.modules)\n"
        "print(sys.modules['hicache_spec.oracle._run'].__file__)\n"
    )
    env = {**_clean_env(), "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(SPEC / "oracle" / "_run.py")  # the checkout's file, live


def test_the_console_script_names_the_installed_package() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert 'hicache-oracle = "hicache_spec.oracle_entry:main"' in text
    assert 'build_py = "tools.build_hooks.BuildPy"' in text


# -- the wheel, installed outside the checkout --------------------------------------------------------


def _copy_sources(to: Path) -> Path:
    """What a build reads (an sdist's files), copied, so that the build writes nothing in the checkout."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("hicache", "spec"):
        shutil.copytree(ROOT / folder, to / folder, ignore=ignore)
    (to / "tools").mkdir(parents=True)
    shutil.copy2(ROOT / "tools" / "build_hooks.py", to / "tools" / "build_hooks.py")
    for name in ("pyproject.toml", "README.md", "MANIFEST.in"):
        shutil.copy2(ROOT / name, to / name)
    return to


def _link_runtime(to: Path, names: tuple[str, ...] = RUNTIME) -> Path:
    """A folder holding links to the installed files of ``names``' distributions, and nothing else."""
    to.mkdir()
    for name in names:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # an optional dependency (exceptiongroup, tomli on 3.11+)
        base = Path(str(dist.locate_file("")))
        for top in {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}:
            if not (to / top).exists() and (base / top).exists():
                (to / top).symlink_to(base / top)
    return to


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "HICACHE_", "PYTEST_", "COV_"))}
    return {**env, "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the built wheel, a fresh venv with it installed), built once for this module's tests."""
    if importlib.util.find_spec("setuptools.command.bdist_wheel") is None:
        import setuptools

        pytest.skip(
            f"setuptools {setuptools.__version__} here has no bdist_wheel; requirements-dev.lock pins one"
            " that has (make rebuilds .venv from the lock)"
        )
    tmp = tmp_path_factory.mktemp("wheel")
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
    venv = tmp / "venv"
    created = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp)
    assert created.returncode == 0, created.stderr
    python = venv / "bin" / "python"
    install = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "--quiet",
            str(wheel),
        ],
        tmp,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], tmp)
    site = Path(purelib.stdout.strip())
    (site / "oracle_runtime.pth").write_text(f"{_link_runtime(tmp / 'runtime')}\n")
    return wheel, venv


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project of the user's, with its own ``spec`` package, outside this checkout."""
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "__init__.py").write_text(USER_SPEC)
    return tmp_path


@pytest.mark.verify_tier  # building the wheel takes 2-6 s
def test_the_wheel_has_no_top_level_spec(installed: tuple[Path, Path]) -> None:
    wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/", 1)[0] for name in names}
    assert "spec" not in tops, sorted(tops)
    assert {"hicache", INSTALLED} <= tops, sorted(tops)
    expected = {str(p.relative_to(SPEC)) for p in SPEC.rglob("*.py")}
    shipped = {name.split("/", 1)[1] for name in names if name.startswith(INSTALLED + "/")}
    assert expected <= shipped, sorted(expected - shipped)
    # the variants' one home, which the README's "Check your own variant" names as targets
    assert {f"variants/{m}.py" for m in ("__init__", "metadata_cache", "file_store")} <= shipped
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert (
        "hicache-oracle = hicache_spec.oracle_entry:main"
        in zipfile.ZipFile(wheel).read(entry_points).decode()
    )


@pytest.mark.verify_tier
@pytest.mark.clauses("O5")
def test_the_installed_oracle_runs_in_a_project_with_its_own_spec(
    installed: tuple[Path, Path], project: Path
) -> None:
    _, venv = installed
    python, script = venv / "bin" / "python", venv / "bin" / "hicache-oracle"
    # The interpreter sees the wheel's packages, the user's spec, and not this checkout.
    probe = _run(
        [
            str(python),
            "-c",
            (
                "import sys, spec, hicache, hicache_spec.oracle, hypothesis\n"
                f"assert spec.WHOSE == {USER_SPEC.split('=')[1].strip()}, spec.__file__\n"
                f"assert not any(p.startswith({str(ROOT)!r}) for p in sys.path), sys.path\n"
                "print(hicache.__file__); print(hicache_spec.oracle.__file__)\n"
                "assert sorted(m for m in sys.modules if m == 'spec' or m.startswith('spec.')) == ['spec']\n"
            ),
        ],
        project,
    )
    assert probe.returncode == 0, probe.stderr
    assert all(line.startswith(str(venv)) for line in probe.stdout.split()), probe.stdout

    # python -m hicache_spec.oracle: PASS for production, FAIL (exit 1) with a repro for a catalogue variant
    passed = _run(
        [
            str(python),
            "-m",
            "hicache_spec.oracle",
            "metadata-cache",
            "hicache.metadata_cache:MetadataCache",
            "--max-examples",
            "30",
            "--steps",
            "15",
        ],
        project,
    )
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "PASS" in passed.stdout, passed.stdout

    # the console script; the file-evictor's reproduction imports the oracle, by its installed name
    listed = _run([str(script), "--list"], project)
    assert listed.returncode == 0 and "file-evictor: available" in listed.stdout, (
        listed.stdout + listed.stderr
    )
    repro = project / "test_repro.py"
    failed = _run(
        [
            str(script),
            "file-evictor",
            f"{INSTALLED}.variants.file_evictor:CommitKeepsReservationOrder",
            "--repro",
            str(repro),
        ],
        project,
    )
    assert failed.returncode == 1, failed.stdout + failed.stderr
    text = repro.read_text()
    assert f"from {INSTALLED}.oracle import machine_for" in text and "from spec" not in text, text
    rerun = _run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(repro)], project)
    assert rerun.returncode == 1 and "1 failed" in rerun.stdout, rerun.stdout + rerun.stderr
    assert "ModuleNotFoundError" not in rerun.stdout + rerun.stderr, rerun.stdout
