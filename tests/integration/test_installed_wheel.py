"""The installed wheel ships the oracle as ``hicache_spec``, never as ``spec``.

``pip install 'hicache-reference[oracle]'`` used to put a top-level ``spec`` package into
site-packages, so in a project with its own ``spec`` package ``python -m spec.oracle`` failed (or the
project's ``spec`` was shadowed).  pyproject.toml maps the folder ``spec/`` to the package
``hicache_spec`` (``[tool.setuptools.package-dir]``), for the wheel and the editable install alike; the
repository imports the folder as ``spec``.  That works because no module of ``spec/`` names its package:
its imports are relative, and the strings that name its modules (the oracle's components table, the
reproduction files' import line, ``python -m`` in usage text) are made from the package's name.

The cheap tests check that on the source (no absolute reference in any module's code or strings), on
pyproject.toml (every package folder is mapped), and by importing the folder under the installed name
beside a project's own ``spec``.  The ``verify_tier`` tests build the wheel with the locked setuptools
(offline, ``--no-build-isolation``), install it with ``--no-deps`` into a fresh venv that sees only
Hypothesis, pytest and their dependencies (linked from this interpreter's site-packages one
distribution at a time, so this checkout, which the editable install puts on the path, stays out of
sight), check the wheel's file list, and run ``python -m hicache_spec.oracle``, the ``hicache-oracle``
script and a reproduction file in a project that has its own ``spec`` package.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec"
INSTALLED = "hicache_spec"  # the package's name once installed
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


# -- the source names no package: it works under either name --------------------------------------------


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of ``tree`` (text for readers, where ``spec.x`` is the repository's)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def absolute_references(source: str) -> list[str]:
    """The places in ``source``'s code that name the package ``spec`` absolutely: an absolute import of
    it, or a string (other than a docstring) holding ``spec.<name>``."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    in_text = re.compile(r"(?<![\w./-])spec\.\w")

    def ours(module: str | None) -> bool:
        return (module or "").partition(".")[0] == "spec"

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and ours(node.module):
            found.append(f"{node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if ours(a.name)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found += [f"{node.lineno}: {node.value[:80]!r}"] if in_text.search(node.value) else []
    return found


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from spec.oracle import check\n", ["1: from spec.oracle import ..."]),
        ("import spec.world.clock as clock\n", ["1: import spec.world.clock"]),
        ('m = importlib.import_module(f"spec.modelcheck.{name}")\n', ["1: 'spec.modelcheck.'"]),
        ('path = "spec.models.existence_cache:Spec"\n', ["1: 'spec.models.existence_cache:Spec'"]),
        ('"""Usage: python -m spec.oracle"""\nfrom . import x\nf"{__package__}.y"\n', []),
        ('"the spec answers", "spec/oracle/_fs.py", "my_spec.oracle"\n', []),
    ],
)
def test_absolute_references_are_found(source: str, expected: list[str]) -> None:
    assert absolute_references(source) == expected


def test_no_module_of_spec_names_its_package() -> None:
    """So the same files serve as ``spec`` here and as ``hicache_spec`` installed, with no rewriting."""
    files = sorted(SPEC.rglob("*.py"))
    assert len(files) > 40, files
    left = {
        str(path.relative_to(ROOT)): found
        for path in files
        if (found := absolute_references(path.read_text(encoding="utf-8")))
    }
    assert not left, left


def test_pyproject_installs_every_package_folder_of_spec_as_hicache_spec() -> None:
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11 on")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    setuptools = config["tool"]["setuptools"]
    assert setuptools["package-dir"] == {INSTALLED: "spec"}
    folders = {
        ".".join([INSTALLED, *init.parent.relative_to(SPEC).parts]) for init in SPEC.rglob("__init__.py")
    }
    listed = {p for p in setuptools["packages"] if p == INSTALLED or p.startswith(INSTALLED + ".")}
    assert listed == folders
    assert not any(p == "spec" or p.startswith("spec.") for p in setuptools["packages"])
    assert config["project"]["scripts"]["hicache-oracle"] == f"{INSTALLED}.oracle_entry:main"
    assert "cmdclass" not in setuptools  # no build step rewrites the sources


def test_the_folder_imported_as_hicache_spec_names_itself_so_beside_a_project_spec(tmp_path: Path) -> None:
    """What ``pip install -e`` and the wheel both do (the folder ``spec/`` as the package ``hicache_spec``),
    made by hand here, beside a project's own ``spec.py``: the oracle imports whole under its own name,
    its components table and the reproduction files' import line say ``hicache_spec``, and the
    project's ``spec`` is untouched."""
    (tmp_path / "spec.py").write_text(USER_SPEC)
    (tmp_path / "mapped.py").write_text(
        "import importlib.util, sys\n"
        f"init = {str(SPEC / '__init__.py')!r}\n"
        f"found = importlib.util.spec_from_file_location({INSTALLED!r}, init,"
        f" submodule_search_locations=[{str(SPEC)!r}])\n"
        "module = importlib.util.module_from_spec(found)\n"
        f"sys.modules[{INSTALLED!r}] = module\n"
        "found.loader.exec_module(module)\n"
    )
    code = (
        "import inspect, mapped, spec, sys\n"
        "from hicache_spec.oracle import check\n"
        "from hicache_spec.oracle._components import COMPONENTS\n"
        "from hicache_spec.oracle import _repro\n"
        "result = check('metadata-cache', 'hicache.metadata_cache:MetadataCache', max_examples=3, steps=3)\n"
        "assert result.verdict == 'PASS', result.summary()\n"
        "paths = [c.machine_path for c in COMPONENTS.values()] + [c.spec_path for c in COMPONENTS.values()]\n"
        "assert all(p.startswith('hicache_spec.') for p in paths), paths\n"
        "assert [c.machine() for c in COMPONENTS.values()]\n"
        "assert _repro.__package__ == 'hicache_spec.oracle'\n"
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


# -- the wheel, installed outside the checkout --------------------------------------------------------


def _copy_sources(to: Path) -> Path:
    """What a build reads (an sdist's files), copied, so that the build writes nothing in the checkout."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("hicache", "hicache_sglang", "spec"):
        shutil.copytree(ROOT / folder, to / folder, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
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
        pytest.skip(
            f"setuptools {importlib.metadata.version('setuptools')} here has no bdist_wheel;"
            " requirements-dev.lock pins one that has (make rebuilds .venv from the lock)"
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
