"""O4, the filesystem half: the oracle interposes its fake filesystem in a target's modules, verifies it was
used, and refuses a run it cannot control (spec/oracle/_fs.py)."""

from __future__ import annotations

import builtins
import os
import posixpath
import shutil
from types import ModuleType
from typing import Any

import pytest

import spec.variants.file_evictor as variants
import tests.oracle._fs_targets as targets
from spec.oracle import OracleUsageError, check, machine_for
from spec.oracle._fs import FakeOS, interpose_fs, restore
from spec.world.clock import FakeClock
from spec.world.filesystem import FakeFileSystem

SMALL: dict[str, Any] = {"max_examples": 60, "steps": 15}
SEARCH = "an oracle search on a target that reaches the disk itself"


def _module(source: str) -> ModuleType:
    module = ModuleType("hicache_oracle_test_target")
    exec(compile(source, "<target>", "exec"), module.__dict__)  # the module a target would be
    return module


@pytest.mark.clauses("O4")
def test_interposition_reaches_module_and_by_name_bindings_and_open_and_is_undone() -> None:
    module = _module(
        "import os, shutil\nimport os.path as osp\n"
        "from os import remove, getpid\nfrom os.path import getsize, join\n"
    )
    fs = FakeFileSystem(FakeClock(0.0))
    fs.mkdir("/d")
    fs.put("/d/a.bin", b"abc")
    fake = FakeOS(fs)
    replaced = interpose_fs(module, fake)
    try:
        assert sorted(replaced) == ["getsize", "open", "os", "osp", "remove", "shutil"]
        namespace = vars(module)
        assert namespace["getsize"]("/d/a.bin") == 3 and namespace["os"].listdir("/d") == ["a.bin"]
        assert namespace["getpid"] is os.getpid and namespace["join"] is posixpath.join  # no disk: left
        with namespace["open"]("/d/b.bin", "wb") as file:
            file.write(b"xy")
        assert namespace["osp"].getsize("/d/b.bin") == 2
        namespace["remove"]("/d/a.bin")
        assert "/d/a.bin" not in fs.files
        fs.fail_unlink("/d/b.bin")
        with pytest.raises(PermissionError):
            namespace["os"].remove("/d/b.bin")  # the machine's faults reach the target as OSErrors
        assert fake.calls["os.remove"] == 2 and fake.calls["open"] == 1
    finally:
        restore(module, replaced)
    namespace = vars(module)
    assert namespace["os"] is os and namespace["shutil"] is shutil and namespace["remove"] is os.remove
    assert "open" not in namespace and builtins.open is open


@pytest.mark.clauses("O4")
@pytest.mark.slow(SEARCH)
def test_a_target_reaching_the_disk_through_from_imports_runs_on_the_fake_and_the_report_says_so() -> None:
    result = check("file-evictor", targets.FromImports, **SMALL)
    assert str(result.fs_control).startswith("interposed:"), result.fs_control
    assert "getsize, os, remove in module tests.oracle._fs_targets" in str(result.fs_control)
    assert "os.remove" in str(result.fs_control) and result.figures["fs_calls"] > 0
    assert "filesystem: interposed" in result.summary()
    assert vars(targets)["remove"] is os.remove and "open" not in vars(targets)  # restored after the run


@pytest.mark.clauses("O4")
@pytest.mark.slow(SEARCH)
def test_the_project_evictor_is_given_the_fake_and_the_report_says_injected() -> None:
    result = check("file-evictor", "hicache.file_evictor:LRUFileEvictor", **SMALL)
    assert result.passed, result.summary()
    assert str(result.fs_control).startswith("injected:") and result.figures["fs_calls"] > 0


@pytest.mark.clauses("O4", "O5")
@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("tests.oracle._fs_nodisk:NoDisk", "refers to os, os.path or shutil"),
        ("tests.oracle._fs_targets:NeverCalls", "never called the filesystem the oracle controls"),
        ("tests.oracle._fs_targets:RealDisk", "touched the real filesystem"),
        ("tests.oracle._fs_targets:Unsupported", "os.truncate"),
    ],
)
@pytest.mark.slow(SEARCH)
def test_a_run_whose_disk_the_oracle_does_not_control_is_a_usage_error(target: str, says: str) -> None:
    with pytest.raises(OracleUsageError, match=says):
        check("file-evictor", target, **SMALL)


@pytest.mark.clauses("V6", "O4")
def test_v6_is_checked_inside_the_callback_the_victims_file_must_still_be_on_disk() -> None:
    def run(target: type) -> None:
        state: Any = machine_for("file-evictor", target)()
        try:
            state.build(cap=10, ratio=1.0, min_free=0, disk_size=1 << 20)
            for key in "abc":
                state.write(key=key, size=5)  # c needs room: a is evicted
                state.check_step()
        finally:
            state.teardown()

    run(variants.OsEvictor)
    with pytest.raises(AssertionError, match=r"V6: on_evict\('a'\) called after its file was unlinked"):
        run(variants.CallbackAfterUnlink)


@pytest.mark.clauses("V5", "V6", "O4")
@pytest.mark.parametrize(
    ("name", "clause"),
    [("StopsAtUnremovable", "V5"), ("CallbackAfterUnlink", "V6"), ("VanishedNotRefunded", "V5")],
)
@pytest.mark.slow(SEARCH)
def test_the_re_created_engine_defects_fail_on_their_clause(name: str, clause: str) -> None:
    result = check("file-evictor", getattr(variants, name), every_clause=False)
    assert result.verdict == "FAIL" and result.clauses[0] == clause, result.summary()
    assert str(result.fs_control).startswith("interposed:"), result.fs_control


@pytest.mark.clauses("O4")
@pytest.mark.slow(SEARCH)
def test_a_file_store_that_calls_open_and_os_itself_is_run_on_the_interposed_fake() -> None:
    result = check("file-store", targets.NaiveStore, **SMALL)
    assert result.verdict == "FAIL", result.summary()  # a controlled verdict: far from F, on the fake
    fs_control = str(result.fs_control)
    assert fs_control.startswith("interposed:") and "open " in fs_control, fs_control
    assert result.figures["fs_calls"] > 0
