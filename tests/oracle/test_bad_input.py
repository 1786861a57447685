"""B1 per component (issue 23, item 8): the oracle tries every bad input each component's clauses name, on
its methods and through its constructor (the existence cache's and the pools': keep_pages of a wrong
type, a bool, non-finite or negative; hashes that are not iterable, or not a sequence for
invalidate_beyond; an extra_cover that is no container; a pool or pool name that is not hashable; a bad
capacity.  The metadata cache's, the file evictor's and the file store's: below), names the first one a
class lets through or refuses with the wrong exception type (or a message that does not name the
parameter), lists the ones it tried and says which constructor settings the target's form cannot take.
The searches over the three newer components are the verify tier's (``slow``)."""

from __future__ import annotations

import json
import re
from collections.abc import Hashable, Sequence
from types import ModuleType

import pytest

import spec.variants.file_evictor as f_variants
import spec.variants.file_store as s_variants
import spec.variants.metadata_cache as m_variants
from spec.machines import file_evictor as v_machine
from spec.machines import file_store as f_machine
from spec.machines import metadata_cache as m_machine
from spec.machines.existence_cache import BAD_INPUTS, BAD_SETTINGS
from spec.machines.pool_beliefs import POOL_BAD_INPUTS, UNHASHABLE_NAME
from spec.models.existence_cache import refuse_bad_input
from spec.oracle import check
from spec.oracle.__main__ import main
from spec.variants.existence_cache import TextbookExistenceLRU

EXAMPLES, STEPS = 30, 10


class OnlyNegativeKeepPages(TextbookExistenceLRU):
    """Validates a negative ``keep_pages`` and nothing else: a bool is taken for an int."""

    def invalidate_beyond(self, pool: Hashable, hashes: Sequence[Hashable], keep_pages: int) -> None:
        if keep_pages < 0:
            raise ValueError(f"keep_pages must be >= 0, got {keep_pages!r}")
        for h in list(hashes)[keep_pages:]:
            self.beliefs.pop((pool, h), None)


class ExtraCoverUnchecked(TextbookExistenceLRU):
    """Validates everything but ``extra_cover``, which it reads only when a page is not believed."""

    def covers_all(self, pool: Hashable, hashes: object, extra_cover: object = frozenset()) -> bool:
        refuse_bad_input(pool, hashes=hashes)
        for h in list(hashes):  # type: ignore[call-overload]
            if (pool, h) in self.beliefs:
                self.beliefs.move_to_end((pool, h))
            elif h not in extra_cover:  # type: ignore[operator]
                return False
        return True


@pytest.mark.clauses("B1", "E6")
@pytest.mark.parametrize(
    ("target", "named"),
    [
        (
            OnlyNegativeKeepPages,
            r"invalidate_beyond keep_pages=True did not raise TypeError|"
            r"invalidate_beyond\('\w', \['h0'\], True\) answered None; the spec raises TypeError",
        ),
        (
            ExtraCoverUnchecked,
            r"covers_all extra_cover=5 did not raise TypeError|"
            r"covers_all\('\w', \[\], 5\) answered True; the spec raises TypeError",
        ),
    ],
)
def test_a_class_that_validates_only_some_inputs_fails_b1_naming_the_one_it_let_through(
    target: type, named: str
) -> None:
    result = check("existence-cache", target, every_clause=False, max_examples=EXAMPLES, steps=STEPS)
    assert result.verdict == "FAIL" and result.clauses == ["B1"], result.summary()
    assert re.search(named, result.message), result.message  # the label, or the call with both answers
    assert "B1" not in result.passed_clauses


@pytest.mark.clauses("B1", "E1", "E5", "E6", "E8")
def test_the_existence_cache_passes_every_bad_input_and_the_report_lists_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["existence-cache", "hicache:StorageExistenceCache", "--json", "--max-examples", "30"]) == 0
    report = json.loads(capsys.readouterr().out)
    constructor = [f"constructor {setting.label}" for setting in BAD_SETTINGS]
    assert report["bad_inputs"] == sorted([*(label for label, *_ in BAD_INPUTS), *constructor])
    assert "B1" in report["passed_clauses"]
    assert main(["existence-cache", "hicache:StorageExistenceCache", "--max-examples", "30"]) == 0
    [line] = [line for line in capsys.readouterr().out.splitlines() if "bad inputs tried (B1)" in line]
    assert "invalidate_beyond keep_pages=nan" in line and "pool=[] (unhashable) on add, contains" in line


@pytest.mark.clauses("B1", "P1", "P2", "P3", "P4")
def test_the_pools_pass_every_bad_input_and_the_report_lists_them() -> None:
    result = check("pool-beliefs", "hicache:PooledExistenceCache", max_examples=EXAMPLES, steps=STEPS)
    assert result.passed, result.summary()
    constructor = [f"constructor {setting.label}" for setting in BAD_SETTINGS]
    labels = [label for label, *_ in (*POOL_BAD_INPUTS, *UNHASHABLE_NAME)]
    assert result.bad_inputs == sorted([*labels, *constructor])


@pytest.mark.clauses("B1", "O2")
def test_with_b1_left_out_no_bad_input_is_tried_or_listed() -> None:
    target = OnlyNegativeKeepPages
    result = check("existence-cache", target, leave_out=["B1"], max_examples=EXAMPLES, steps=STEPS)
    assert result.passed and result.bad_inputs == [], result.summary()
    assert "bad inputs tried" not in result.summary()


# -- the metadata cache, the file evictor and the file store (issue 23, item 8) ----------------------

SEARCH = "an oracle search over a component's wrong variant or production class (up to 300 examples)"

# Each component's wrong variants of spec/variants (one lets a bad input through, one raises the wrong
# exception type, one accepts a bad constructor setting), with what the failure must name.
_M, _V, _F = "metadata-cache", "file-evictor", "file-store"
B1_VARIANTS = [
    (_M, m_variants.RemoveIgnoresUnhashableKeys, r"cache\.remove\(\[\]\) answered None; the spec raises"),
    (_M, m_variants.UnhashableKeyIsAValueError, r"cache\.add\(\[\]\) raised ValueError: .*spec raises Type"),
    (_M, m_variants.NanTtlAccepted, r"^B1: NanTtlAccepted\(nan, .*\) raised nothing \(ValueError expected\)"),
    (_V, f_variants.NegativeSizeAdmitted, r"B1: reserve nbytes=-1 did not raise ValueError; it raised no"),
    (_V, f_variants.SizeIsAValueError, r"B1: reserve nbytes=True did not raise TypeError; it raised Val"),
    (_V, f_variants.RatioUnchecked, r"^B1: RatioUnchecked\(.*eviction_ratio=0, .*\) raised nothing"),
    (_F, s_variants.DotKeysAccepted, r"B1: set key='\.a' did not raise ValueError; it raised nothing"),
    (_F, s_variants.KeyTypeIsAValueError, r"B1: set key=5 did not raise TypeError; it raised ValueError"),
    (_F, s_variants.UnknownSettingsIgnored, r"extra_config=\{'no_such_setting': 1\}.* raised nothing"),
]


@pytest.mark.slow(SEARCH)
@pytest.mark.clauses("B1", "O2")
@pytest.mark.parametrize(
    ("component", "target", "named"), B1_VARIANTS, ids=[t.__name__ for _c, t, _n in B1_VARIANTS]
)
def test_a_wrong_variant_that_lets_a_bad_input_through_or_raises_the_wrong_type_fails_b1_alone(
    component: str, target: type, named: str
) -> None:
    result = check(component, target, every_clause=False, max_examples=300, steps=15)
    assert result.verdict == "FAIL" and result.clauses == ["B1"], result.summary()
    assert re.search(named, result.message), result.message
    assert result.counterexample and result.repro and "B1" not in result.passed_clauses
    # B1 alone: with the group left out (not validating input, declared: O3) the same class passes.
    left_out = check(component, target, leave_out=["B1"], max_examples=30, steps=15)
    assert left_out.passed and left_out.bad_inputs == [], left_out.summary()


PRODUCTION = [
    ("metadata-cache", "hicache:MetadataCache", m_machine),
    ("file-evictor", "hicache.file_evictor:LRUFileEvictor", v_machine),
    ("file-store", "hicache:HiCacheFile", f_machine),
]


@pytest.mark.slow(SEARCH)
@pytest.mark.clauses("B1", "M1", "M3", "M9", "V1", "V3", "F1", "F2", "F5", "F9", "S5")
@pytest.mark.parametrize(("component", "target", "machine"), PRODUCTION, ids=[c for c, *_ in PRODUCTION])
def test_the_production_classes_pass_b1_and_the_report_lists_every_bad_input_tried(
    component: str, target: str, machine: ModuleType
) -> None:
    result = check(component, target, max_examples=30, steps=15)
    assert result.passed and "B1" in result.passed_clauses, result.summary()
    tried = {b.label for b in machine.BAD_INPUTS} | {f"constructor {s.label}" for s in machine.BAD_SETTINGS}
    assert result.bad_inputs == sorted(tried) and result.bad_inputs_not_tried == {}, result.summary()
    assert "  bad inputs tried (B1): " in result.summary()


@pytest.mark.slow(SEARCH)
@pytest.mark.clauses("B1", "O3")
def test_a_setting_the_targets_constructor_form_cannot_take_is_not_tried_and_the_report_says_why(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # MonotonicHardTTL takes no max_entries, no stats and no clock (it reads time.monotonic: patched).
    target = "spec.variants.metadata_cache:MonotonicHardTTL"
    argv = ["metadata-cache", target, "--max-examples", "20", "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    not_tried = report["bad_inputs_not_tried"]
    bounds = {f"constructor {s.label}" for s in m_machine.BAD_SETTINGS if "max_entries" in s.settings}
    no_bound = "the target's constructor takes no max_entries"
    assert {k for k, why in not_tried.items() if why == no_bound} == bounds
    patched = "the target takes no clock (the oracle patches its time)"
    assert not_tried["constructor clock=5 (not callable)"] == patched
    assert not_tried["constructor stats=1 (not a bool)"] == "the target's constructor takes no stats"
    assert "constructor ttl_seconds=nan" in report["bad_inputs"]  # its first argument (positional: ttl)
    assert not set(not_tried) & set(report["bad_inputs"])
    assert main(argv[:-1]) == 0
    [line] = [line for line in capsys.readouterr().out.splitlines() if "bad inputs not tried (B1)" in line]
    assert "constructor max_entries=0 (the target's constructor takes no max_entries)" in line
    # A parameter the target has but the adapter omits is not tried either, and the report says so.
    adapter = {"omit": ["max_entries"]}
    omitted = check("metadata-cache", "hicache:MetadataCache", adapter=adapter, max_examples=20)
    assert omitted.passed, omitted.summary()
    omits = "the adapter omits max_entries"
    assert {k for k, why in omitted.bad_inputs_not_tried.items() if why == omits} == bounds
