"""B1 per component (issue 23, item 8): the oracle tries every bad input the existence cache's and the
pools' clauses name (keep_pages of a wrong type, a bool, non-finite or negative; hashes that are not
iterable, or not a sequence for invalidate_beyond; an extra_cover that is no container; a pool or pool
name that is not hashable), names the first one a class lets through, and lists the ones it tried."""

from __future__ import annotations

import json
import re
from collections.abc import Hashable, Sequence

import pytest

from spec.existence_cache import refuse_bad_input
from spec.machines.existence_cache import BAD_INPUTS, BAD_SETTINGS
from spec.machines.pool_beliefs import POOL_BAD_INPUTS, UNHASHABLE_NAME
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
        (OnlyNegativeKeepPages, r"invalidate_beyond keep_pages=True did not raise TypeError|"
         r"invalidate_beyond\('\w', \['h0'\], True\) answered None; the spec raises TypeError"),
        (ExtraCoverUnchecked, r"covers_all extra_cover=5 did not raise TypeError|"
         r"covers_all\('\w', \[\], 5\) answered True; the spec raises TypeError"),
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
