"""The reproduction file is real: run by pytest in a fresh process, it fails against the wrong variant
and passes against a correct implementation (issue 5)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from spec.oracle import check
from tests.conftest import RunPytest

REPRODUCTION = "oracle searches, then their reproductions run by pytest in fresh processes"

# (component, wrong target, seed, a correct target, what the file must contain)
CASES = [
    (
        "metadata-cache",
        "spec.variants.metadata_cache:BoundaryExclusive",
        0,
        "spec.variants.metadata_cache:TextbookHardTTL",
        "clock=clock",
    ),
    (
        "metadata-cache",
        "spec.variants.metadata_cache:MonotonicBoundaryExclusive",
        0,
        "spec.variants.metadata_cache:MonotonicHardTTL",
        "control_time(module",
    ),
    (
        "metadata-cache",
        "spec.variants.metadata_cache:HitOnExpiredEntry",
        1,
        "spec.variants.metadata_cache:CountingTextbook",
        "answer.hits",
    ),
    (
        "existence-cache",
        "spec.variants.existence_cache:ContainsAllSizesTheChain",
        0,
        "hicache:StorageExistenceCache",
        "iter([",
    ),
    (
        "existence-cache",
        "spec.variants.existence_cache:NegativeKeepPagesSlicesFromTheEnd",
        0,
        "spec.models.existence_cache:StorageExistenceCacheSpec",
        "pytest.raises(ValueError)",
    ),
    (
        "pool-beliefs",
        "spec.variants.pool_beliefs:InflightAsASet",
        0,
        "hicache:PoolExistenceBeliefs",
        "PerPoolRegistry(lambda",
    ),
]


def _output(run: subprocess.CompletedProcess[str]) -> str:
    return run.stdout + run.stderr


@pytest.mark.clauses("M2", "M8", "E6", "E8", "P3")
@pytest.mark.slow(REPRODUCTION)
def test_each_reproduction_fails_against_its_variant_and_passes_against_a_correct_one(
    tmp_path: Path, run_pytest: RunPytest
) -> None:
    wrong, fixed = tmp_path / "wrong", tmp_path / "fixed"
    wrong.mkdir()
    fixed.mkdir()
    for i, (component, target, seed, correct, marker) in enumerate(CASES):
        result = check(component, target, seed=seed, max_examples=300, steps=15)
        assert result.verdict == "FAIL", result.summary()
        assert marker in result.repro, result.repro
        assert f"Breaks: {result.clauses[0]}" in result.repro
        (wrong / f"test_repro_{i}.py").write_text(result.repro)
        (fixed / f"test_repro_{i}.py").write_text(result.repro.replace(repr(target), repr(correct), 1))
    failing = _output(run_pytest(wrong))
    assert re.search(rf"\b{len(CASES)} failed\b", failing), failing
    assert "passed" not in failing, failing
    passing = _output(run_pytest(fixed))
    assert re.search(rf"\b{len(CASES)} passed\b", passing), passing
    assert "failed" not in passing, passing


# (component, wrong target, the correct class): the file components' reproductions drive the machine
FILE_CASES = [
    (
        "file-evictor",
        "spec.variants.file_evictor:TouchAdoptsWithoutSize",
        "hicache.file_evictor:LRUFileEvictor",
    ),
    ("file-store", "spec.variants.file_store:KeepsTempOnFailure", "hicache.file_store:HiCacheFile"),
    # O4: a target that calls os itself; the reproduction interposes the fake as the run did (about 7 s:
    # the run goes on after V6 to look for other clauses, then two pytest processes)
    pytest.param(
        "file-evictor",
        "spec.variants.file_evictor:CallbackAfterUnlink",
        "spec.variants.file_evictor:OsEvictor",
        marks=pytest.mark.verify_tier,
    ),
]


@pytest.mark.clauses("V4", "C3", "F3", "B2", "V6", "O4")
@pytest.mark.parametrize(
    ("component", "target", "correct"),
    FILE_CASES,
    ids=[f"{v[0]}:{str(v[1]).rsplit(':')[-1]}" for v in (getattr(c, "values", c) for c in FILE_CASES)],
)
@pytest.mark.slow(REPRODUCTION)
def test_a_file_component_reproduction_replays_the_machine_steps_and_passes_on_the_fixed_class(
    tmp_path: Path, component: str, target: str, correct: str, run_pytest: RunPytest
) -> None:
    result = check(component, target, max_examples=300, steps=15)
    assert result.verdict == "FAIL", result.summary()
    assert 1 <= result.calls <= 8
    assert f"machine_for({component!r}, TARGET" in result.repro
    assert f"Breaks: {result.clauses[0]}" in result.repro
    (tmp_path / "test_repro_file_component.py").write_text(result.repro)
    failing = _output(run_pytest(tmp_path))
    assert re.search(r"\b1 failed\b", failing), failing
    passing = _output(run_pytest(tmp_path, env={"HICACHE_ORACLE_TARGET": correct}))
    assert re.search(r"\b1 passed\b", passing), passing
