"""O12: the engine's form of a file store in the oracle (issue 31 part 1).

The engine release's own ``HiCacheFile`` is loaded from its wheel, unmodified, under the engine's dotted
names (``benchmarks.engine_wheel.load_engine_storage``) for the whole session; without torch or the
wheel the tests that need it are skipped, saying why.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from spec.oracle import check
from spec.oracle.__main__ import main
from spec.oracle._run import prepared


@pytest.fixture(scope="session")
def engine(engine_storage: ModuleType) -> ModuleType:
    """The engine's ``sglang.srt.mem_cache.hicache_storage`` from the release wheel (skipped without it)."""
    return engine_storage


@pytest.mark.clauses("O12", "F4")
def test_the_engine_release_fails_with_clauses_and_a_runnable_repro(engine: ModuleType) -> None:
    """O12: the engine's HiCacheFile, recognised by its constructor (storage_config, file_path), run
    sequentially: a FAIL naming its clauses, among them F4 (a target of the wrong size read as a hit),
    each with a reproduction that fails when run; delete is left out and listed (O8)."""
    result = check("file-store", engine.HiCacheFile, max_examples=20, steps=20)
    assert result.verdict == "FAIL"
    assert result.adapter["form"] == "engine"
    assert "delete" in result.missing
    failing = {clause for failure in result.failures for clause in failure.clauses}
    assert "F4" in failing, failing
    f4 = next(f for f in result.failures if "F4" in f.clauses)
    assert f4.calls >= 1 and "get_into" in "\n".join(f4.counterexample)
    namespace: dict[str, Any] = {}
    exec(compile(f4.repro, "repro.py", "exec"), namespace)
    test = next(v for k, v in namespace.items() if k.startswith("test_"))
    # A reproduction that fails never reaches its teardown, which takes the stand-ins out of the target's
    # modules: their globals are put back by hand here, for the tests after this one.
    modules = [m for n, m in sys.modules.items() if n.startswith("sglang.")]
    saved = [(m, dict(vars(m))) for m in modules]
    try:
        with pytest.raises(AssertionError, match="F4"):
            test()
    finally:
        for module, globals_ in saved:
            vars(module).clear()
            vars(module).update(globals_)


class _KwargsForm:
    """What the engine's factory builds for a dynamic backend: ``backend_class(storage_config, kwargs)``."""

    def __init__(self, storage_config: Any, kwargs: dict[str, Any]) -> None:
        HiCacheFile = sys.modules["sglang.srt.mem_cache.hicache_storage"].HiCacheFile  # the engine fixture's

        self.store = HiCacheFile(storage_config, kwargs["file_path"])

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["store"], name)


class _Renamed:
    """A store whose constructor names its parameters otherwise: the engine form only when declared."""

    def __init__(self, config: Any, path: str) -> None:
        HiCacheFile = sys.modules["sglang.srt.mem_cache.hicache_storage"].HiCacheFile  # the engine fixture's

        self.store = HiCacheFile(config, path)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["store"], name)


@pytest.mark.clauses("O12")
@pytest.mark.parametrize(
    ("target", "adapter"),
    [("file_path", {}), ("kwargs", {}), ("declared", {"form": "engine"})],
)
def test_the_engine_form_is_recognised(engine: ModuleType, target: str, adapter: dict[str, Any]) -> None:
    """O12: (storage_config, file_path), (storage_config, kwargs) and --adapter '{"form": "engine"}' select
    the engine form, which the probe records (O10); the kwargs form's store gets the directory too."""
    chosen = {"file_path": engine.HiCacheFile, "kwargs": _KwargsForm, "declared": _Renamed}[target]
    with prepared("file-store", chosen, adapter=adapter) as run:
        assert run.session.probe.form == "engine"
        assert "delete" in run.session.left_out
        assert run.session.fs_control.mode == "interposed"


@pytest.mark.clauses("O12")
def test_a_store_of_another_form_is_not_the_engine_form() -> None:
    """O12: a file store with the component's own constructor keeps the plain form."""
    from hicache import HiCacheFile

    with prepared("file-store", HiCacheFile) as run:
        assert run.session.probe.form == "global"


@pytest.mark.clauses("O12", "O5")
def test_without_torch_the_engine_form_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """O12, O5: without torch an engine-form target is exit 2 naming torch (``import torch`` made to fail)."""
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    code = main(
        ["file-store", f"{__name__}:_Renamed", "--adapter", '{"form": "engine"}', "--max-examples", "1"]
    )
    assert code == 2
    assert "torch" in capsys.readouterr().err


@pytest.fixture
def reference_store(engine: ModuleType) -> Iterator[type]:
    """``hicache_sglang.HiCacheReferenceStore`` imported against the engine fixture's modules."""
    for name in [n for n in sys.modules if n == "hicache_sglang" or n.startswith("hicache_sglang.")]:
        del sys.modules[name]  # made against another load of the engine: its base class is not this one
    import hicache_sglang

    yield hicache_sglang.HiCacheReferenceStore
    for name in [n for n in sys.modules if n == "hicache_sglang" or n.startswith("hicache_sglang.")]:
        del sys.modules[name]


# B1 is left out: the engine's get takes a tensor, so every buffer the spec's B1 tries on get_into (a
# non-contiguous or read-only memoryview: ValueError in the spec) is a wrong type there (TypeError).
ENGINE_B1 = ("B1",)


def _passes(result: Any) -> None:
    assert result.verdict == "PASS", result.summary()
    assert result.adapter["form"] == "engine" and "delete" in result.missing
    assert str(result.fs_control).startswith("interposed:") and "fcntl, os in module hicache.fs" in str(
        result.fs_control
    )
    assert "hicache.fs" in result.time_control  # its now() is the fake clock: temp ages (F8) are the spec's
    for clause in ("F3", "F4", "F5", "F6", "F8", "C1", "C3", "C4", "S3"):
        assert clause in result.passed_clauses, (clause, result.summary())
    assert "C5" not in result.passed_clauses  # sequential: not checked (O8)


@pytest.mark.clauses("O12", "O4", "F10")
def test_the_reference_store_passes_the_engine_form(reference_store: type) -> None:
    """Issue 31: the reference store as the engine's dynamic backend, (storage_config, kwargs), runs on the
    oracle's fake filesystem through its OSFileSystem port's os.open/os.read/os.write/fcntl.flock and
    PASSes sequentially (B1 left out: the engine's tensors, above)."""
    _passes(check("file-store", reference_store, max_examples=50, leave_out=ENGINE_B1))


@pytest.mark.clauses("O12", "O4", "F10")
@pytest.mark.slow("the engine form's default budget: 500 examples of the reference store inside the engine")
def test_the_reference_store_passes_the_engine_form_at_the_default_budget(reference_store: type) -> None:
    _passes(check("file-store", reference_store, leave_out=ENGINE_B1))


@pytest.mark.clauses("O12", "B1", "O8")
def test_the_reference_stores_b1_differs_only_where_the_engine_takes_tensors(reference_store: type) -> None:
    """Why B1 is left out: without --leave-out, B1 fails on get_into's buffer alone (a memoryview is no
    tensor: TypeError), and the reference's own settings the engine lacks are not tried (O8)."""
    result = check("file-store", reference_store, max_examples=20)
    failing = [failure for failure in result.failures if "B1" in failure.clauses]
    assert result.verdict == "FAIL" and len(failing) == 1, result.summary()
    assert "get_into buffer" in failing[0].message and "TypeError" in failing[0].message
    assert {clause for failure in result.failures for clause in failure.clauses} == {"B1"}
