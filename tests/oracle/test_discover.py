"""What a new user finds without reading the source (issue 23): ``--help``, ``--list`` and
``COMPONENT --describe`` (work without Hypothesis), one-line usage errors, and ``--repro`` checked
before the run, one file per failing clause into a directory."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from spec.conformance.clauses import CLAUSES
from spec.oracle import Adapter
from spec.oracle.__main__ import MISSING, main, repro_name
from spec.oracle._adapter import KEYS
from spec.oracle._components import COMPONENTS

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--max-examples", "300", "--steps", "15"]
TARGETS = "tests.oracle._o5_targets"

# Hypothesis made unimportable before anything else is imported (``find_spec`` answers None for it).
NO_HYPOTHESIS = "import sys; sys.modules['hypothesis'] = None\n"


def _without_hypothesis(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", NO_HYPOTHESIS + code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("argv", "status", "expected"),
    [
        (["--help"], 0, "--describe"),
        (["existence-cache", "--describe"], 0, "Required methods"),
        (["--list"], 0, "metadata-cache: not available"),
        (["metadata-cache", "spec.variants.metadata_cache:TextbookHardTTL"], 2, MISSING),
    ],
    ids=["help", "describe", "list", "a-run"],
)
def test_help_list_and_describe_work_without_hypothesis(argv: list[str], status: int, expected: str) -> None:
    for entry in ("spec.oracle_entry", "spec.oracle.__main__"):  # the console script and python -m
        done = _without_hypothesis(f"from {entry} import main; sys.exit(main({argv!r}))")
        assert done.returncode == status, done.stdout + done.stderr
        assert expected in done.stdout + done.stderr, done.stdout + done.stderr
        assert "Traceback" not in done.stderr, done.stderr


def test_python_m_spec_oracle_help_works_without_hypothesis() -> None:
    done = _without_hypothesis(
        "import runpy; sys.argv = ['x', '--help']; runpy.run_module('spec.oracle', run_name='__main__')"
    )
    assert done.returncode == 0 and "usage: hicache-oracle" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize(
    "argv",
    [["--max-examples", "x"], ["--no-such-option"], ["a", "b", "c"]],
    ids=["bad-int", "unknown-option", "extra-argument"],
)
def test_an_argparse_error_is_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("hicache-oracle: error: "), err
    assert "--help" in err


def test_list_names_each_components_spec_constructor_and_required_methods(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    for name, component in COMPONENTS.items():
        [line] = [line for line in out.splitlines() if line.startswith(f"{name}: available; ")]
        assert all(f"{method}(" in line for method in component.required), line
        assert f"target({component.constructor[0]}" in line, line
    assert "--describe" in out


def _section(text: str, title: str) -> list[str]:
    """The indented lines under the heading that starts with ``title``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    body = []
    for line in lines[start + 1 :]:
        if not line.startswith(" "):
            break
        body.append(line.strip())
    return body


@pytest.mark.parametrize("name", list(COMPONENTS))
def test_describe_is_read_off_the_tables_the_oracle_runs_on(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    component = COMPONENTS[name]
    assert main([name, "--describe"]) == 0
    out = capsys.readouterr().out
    first, *rest = component.constructor
    assert f"target({', '.join([first, *(f'{p}=...' for p in rest)])})" in out
    required = _section(out, "Required methods")
    for method in component.required:
        [line] = [line for line in required if re.match(rf"(pool\(name\)\.)?{re.escape(method)}\(", line)]
        clauses = component.method_clauses.get(method, ("-",))
        assert line.rsplit(")", 1)[1].replace(",", " ").split() == list(clauses), line
    optional = _section(out, "Optional methods")
    for method, why in component.optional_methods.items():
        [line] = [line for line in optional if re.match(rf"(pool\(name\)\.)?{re.escape(method)}\(", line)]
        for clause in re.findall(r"\b[A-Z][1-9]\b", why.split(":", 1)[0]):
            assert clause in line, (line, why)
    groups = _section(out, "Groups --leave-out")
    assert [line.split()[0] for line in groups if line != "none"] == sorted(component.groups)
    titles = {c.id: c.title for c in CLAUSES}
    assert all(titles[line.split()[0]] in line for line in groups if line != "none")
    choices = _section(out, "Design choices --declare")
    assert [line for line in choices if line != "none"] == [
        f"{choice}={'|'.join(values)}" for choice, values in component.choices.items()
    ]
    adapter = _section(out, "Adapter keys")
    keys = [line.split(":")[0] for line in adapter if not line.startswith("e.g.")]
    assert keys == [k for k in KEYS if k != "form" or component.pooled]
    examples = [
        json.loads(line.split("--adapter ", 1)[1].strip("'")) for line in adapter if line.startswith("e.g.")
    ]
    assert [next(iter(e)) for e in examples] == keys
    for example in examples:
        Adapter.from_dict(example)  # each example is an adapter the oracle takes


def test_describe_without_a_known_component_is_a_one_line_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["no-such", "--describe"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown component 'no-such'" in err and "metadata-cache" in err


@pytest.mark.clauses("O2")
def test_the_leave_out_error_lists_the_groups_sorted(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["existence-cache", f"{TARGETS}:KeepPagesUnchecked", *SMALL, "--leave-out", "Z9"]) == 2
    err = capsys.readouterr().err
    assert f"(groups: {', '.join(sorted(COMPONENTS['existence-cache'].groups))})" in err, err


# -- --repro --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["missing-directory", "read-only-directory", "a-file-as-directory"])
def test_a_repro_path_that_cannot_be_written_is_a_usage_error_before_the_run(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import spec.oracle._run

    def no_run(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the run started before --repro was checked")

    monkeypatch.setattr(spec.oracle._run, "check", no_run)
    if where == "missing-directory":
        path = str(tmp_path / "no" / "such" / "test_repro.py")
    elif where == "read-only-directory":
        if not Path("/proc/self").is_dir():
            pytest.skip("no /proc here: a directory in which not even root can create a file")
        path = "/proc/test_repro.py"  # the permission bits may allow it (root): creating a file fails
    else:
        (tmp_path / "plain").write_text("")
        path = str(tmp_path / "plain" / "test_repro.py")
    argv = ["metadata-cache", "spec.variants.metadata_cache:BoundaryExclusive", *SMALL, "--repro", path]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and f"--repro {path}" in captured.err


@pytest.mark.slow("an oracle search of up to 600 examples for two failing clauses, about 4 s")
@pytest.mark.clauses("O2", "M2", "M5")
def test_a_repro_directory_receives_one_file_per_failing_clause(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "repros"
    argv = [
        "metadata-cache",
        f"{TARGETS}:ExclusiveAndLenCountsExpired",
        "--max-examples",
        "600",
        "--steps",
        "15",
    ]
    assert main([*argv, "--json", "--repro", f"{folder}/"]) == 1
    failures = json.loads(capsys.readouterr().out)["failures"]
    assert len(failures) >= 2
    files = {path.name: path.read_text() for path in folder.iterdir()}
    assert files == {repro_name(f["clauses"]): f["repro"] for f in failures}
    assert {"test_repro_M2.py", "test_repro_M5.py"} <= {name.replace("_M4", "") for name in files}, files
