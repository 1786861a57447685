"""``make mutation``: mutation testing of ``hicache/`` with mutmut, one file at a time.

For each production module, in a scratch copy of the committed tree
(``build/mutation/<module>``, so the working tree is never mutated), mutmut generates mutants of that module
only and runs, for each mutant, the tests of the module's narrowest selection
(``SELECTIONS``) that reach the mutated function, under the small derandomized
Hypothesis profile ``mutation``.  A mutant is *killed* when a test fails,
*survives* otherwise.  The score per module and in total, with every survivor's
name and diff, goes to ``docs/mutation-score.json``; ``make verify`` prints the
last recorded score.  Each survivor must be explained in ``docs/MUTATION.md``
(an equivalent mutant, or a test added to kill it).

Why mutmut: it installs and runs here and mutates a copy; it skips decorated
functions (only the ``@property`` getters in ``hicache/``, which return an
attribute), and trampolines the rest.  One worker by default (``--jobs``): the
machine is shared.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

__all__ = ["EQUIVALENT", "SELECTIONS", "main"]

ROOT = Path(__file__).resolve().parents[2]  # spec/conformance/mutation.py -> the checkout
SCRATCH = ROOT / "build" / "mutation"
SCORE = ROOT / "docs" / "mutation-score.json"
TIMEOUT_MULTIPLIER = 3.0  # see _configure
TIMEOUT_CONSTANT = 10.0

_MC = [
    "tests/unit/test_metadata_cache.py",
    "tests/stateful/test_metadata_cache_machine.py",
    "tests/modelcheck/test_explorer.py",
    "tests/modelcheck/test_refinement_mapping.py",
    "tests/concurrency/test_metadata_cache_threads.py",
    "tests/unit/test_metadata_cache_edges.py",
    # The M9 batches' own tests (the batches came after the last recorded run: 128 mutants then, 306 now).
    "tests/unit/test_metadata_cache_batches.py",
    # Every way of asking in every mode at a TTL of 0 and below a second (the run of 2026-12-01).
    "tests/unit/test_metadata_cache_answer_edges.py",
]
_FILE_STORE_UNITS = [
    "hicache/file_layout.py",
    "hicache/file_trust.py",
    "hicache/file_knowledge.py",
    "hicache/file_startup.py",
    "hicache/file_store.py",
]
_FILE_STORE = [
    # The units' own tests (one file per unit of hicache/) and the store's batches (M9): cheap.
    "tests/unit/test_file_layout.py",
    "tests/unit/test_file_trust.py",
    "tests/unit/test_file_knowledge.py",
    "tests/unit/test_file_startup.py",
    "tests/unit/test_file_store.py",
    "tests/unit/test_file_naming.py",
    "tests/unit/test_metadata_cache_batches.py",
    "tests/stateful/test_file_store_machine.py",
    "tests/stateful/test_background_scan.py",
    "tests/modelcheck/test_file_store_modelcheck.py",
    "tests/modelcheck/test_c1_schedules.py",
    # Tests of the checkers (a wrong variant must be caught) do not test production: left out, and
    # they are the slowest (every mutant that survives would pay for them).
    "--deselect=tests/stateful/test_file_store_machine.py::test_machine_catches_the_deliberately_wrong_variant",
    "--deselect=tests/modelcheck/test_file_store_modelcheck.py::"
    "test_every_sequential_file_store_bug_is_caught_with_a_shortest_counterexample",
    "--deselect=tests/modelcheck/test_file_store_modelcheck.py::"
    "test_the_missing_c1_guard_is_invisible_to_any_sequential_exploration",
    "--deselect=tests/modelcheck/test_c1_schedules.py::"
    "test_the_store_without_the_c1_guard_is_caught_in_every_scenario",
    "--deselect=tests/modelcheck/test_c1_schedules.py::test_a_violating_schedule_replays_to_the_same_violation",
    "--deselect=tests/stateful/test_background_scan.py::test_the_machine_catches_each_wrong_background_scan",
    "--deselect=tests/stateful/test_background_scan.py::"
    "test_the_model_scanning_in_the_background_conforms_to_its_own_machine",
]
SELECTIONS: dict[str, list[str]] = {
    "hicache/metadata_cache.py": _MC,
    "hicache/_validate.py": ["tests/unit/test_validate.py", "tests/unit/test_metadata_cache.py"],
    "hicache/existence_cache.py": [
        "tests/unit/test_existence_cache.py",
        "tests/unit/test_existence_cache_edges.py",
        "tests/stateful/test_existence_cache_machine.py",
        "tests/modelcheck/test_existence_caches.py",
    ],
    "hicache/file_config.py": ["tests/unit/test_file_config.py", "tests/unit/test_file_config_edges.py"],
    "hicache/file_evictor.py": [
        "tests/unit/test_file_evictor.py",
        "tests/unit/test_file_evictor_edges.py",
        "tests/unit/test_file_evictor_writers.py",
        "tests/stateful/test_file_evictor_machine.py",
        "tests/modelcheck/test_file_store_modelcheck.py",
        # The probe guards (_Overlaps: C1, F4), S7's back-off and S8's relieve are exercised through the
        # store: the tests once in its overlaps and security files, now spread over its units' files.
        "tests/unit/test_file_layout.py",
        "tests/unit/test_file_trust.py",
        "tests/unit/test_file_knowledge.py",
        "tests/unit/test_file_startup.py",
        "tests/unit/test_file_store.py",
    ],
    # HiCacheFile and its collaborators (layout, trust, knowledge, start-up) are tested through the store:
    # one selection for the five units (mutmut runs, per mutant, only the tests that reach its function).
    **{module: _FILE_STORE for module in _FILE_STORE_UNITS},
    "hicache/fs.py": ["tests/unit/test_filesystem_port.py"],
    # EngineNaming (F10): its own tests, the only ones that use it in-process.  The engine backend's tests
    # (tests/integration) reach it through hicache_sglang and benchmarks/engine_wheel.py, which the scratch
    # copy (hicache, spec, tests) does not hold.
    "hicache/file_naming.py": ["tests/unit/test_file_naming.py"],
    # The walks both existence caches share: the tests of both.
    "hicache/_lru_walks.py": [
        "tests/unit/test_existence_cache.py",
        "tests/unit/test_existence_cache_edges.py",
        "tests/unit/test_pool_beliefs.py",
        "tests/unit/test_pool_beliefs_edges.py",
        "tests/stateful/test_existence_cache_machine.py",
        "tests/stateful/test_pool_beliefs_machine.py",
        "tests/modelcheck/test_existence_caches.py",
    ],
    "hicache/pool_beliefs.py": [
        "tests/unit/test_pool_beliefs.py",
        "tests/unit/test_pool_beliefs_edges.py",
        "tests/stateful/test_pool_beliefs_machine.py",
        "tests/modelcheck/test_existence_caches.py",
    ],
}


_FALSY = "popitem(last=None): None is falsy, like False"
_MC_CLASS = "hicache.metadata_cache.xǁMetadataCacheǁ"
_UNUSED_NOW = (
    "now = 1.0 instead of 0.0 when the TTL is -1: the placeholder is never read (ttl < 0 decides every"
    " answer before now - birth is computed)"
)
_SAME_BIRTHS = (
    "births.get instead of recency.get under 'lru': the two dicts map the same keys to the same births"
    " (an invariant check_invariants asserts; every add, remove, clear and reclaim changes both under the"
    " lock), so every lookup answers the same; the recency order is still moved through recency itself"
)
_FE = "hicache.file_evictor."
_FE_CLASS = _FE + "xǁLRUFileEvictorǁ"
_FE_MARK = (
    "publications is an opaque mark, only ever compared (entry.seen > since in forget_missing, seen <="
    " publications in the invariants): starting at 1 or stepping by 2 keeps it strictly increasing, so"
    " every comparison gives the same answer"
)
_E = "hicache.existence_cache."
_E_CLASS = _E + "xǁStorageExistenceCacheǁ"
_FAST_PATH = (
    "only skips a fast path: the slow path gives the same result (a list/tuple is copied, a set is also a"
    " Collection, an identity test falls back to a copy)"
)
_FS = "hicache.file_store."
_FS_CLASS = _FS + "xǁHiCacheFileǁ"
_ALTSEP = (
    "a mutant of the os.altsep test: os.altsep is None on POSIX (it is '/' on Windows only), so the test"
    " is False with or without the mutation here; the '/' and NUL tests before it are killed"
)
_STRICTER_PRECHECK = (
    "the cheap length bound in front of the exact encoded-name check of an ASCII key made stricter (4"
    " bytes per character, or >= instead of >): more keys take the exact check, which decides alone;"
    " only speed changes.  The looser mutants are killed by the boundary-key tests"
)
_BATCH_SLOW_PATH = (
    "join(None) raises TypeError, taken for a key that is not a str: every key then goes through check,"
    " which decides alone; only speed changes"
)
_MORE_UNPLAIN = (
    "'X' added to the characters that make a key not plain: a batch with an 'X' in it is checked key by"
    " key, and check decides each key alone, as the batch's plain path would; only speed changes"
)
_JOINED_XXXX = (
    "the keys (or name parts) joined with 'XXXX' between them: every test on the joined string (isascii,"
    " no '/', NUL, '.', '_' or '%') answers the same with ASCII letters added"
)
_UNUSED_MARKS = (
    "a removals or publications mark of 1 answered for a read that ran out of memory: with missing"
    " False and nothing found, _observe reads neither mark"
)
_OS = "hicache.fs.xǁOSFileSystemǁ"
_ONE_MORE_READ = (
    "while got <= size: one more pass once every byte is in, which asks for 0 bytes (read(0) is b'',"
    " readinto of an empty slice is 0) and breaks out: the same answer"
)
_SIGNED_BYTES = (
    "a signed-byte ('b') view instead of an unsigned one ('B'), of the same contiguous memory: the value is"
    " only written (bytes are bytes) and measured (one byte per item either way)"
)
_TOUCH_NONE = "touch=None instead of False: only ever tested for truth, and None is falsy like False"
_COMMIT_SIZE = (
    "commit(key, None / no size): the size only re-adopts an entry that vanished while its write was in"
    " flight, and no path drops an in-flight entry (discard, clear and eviction skip it; abort of one"
    " writer keeps it for the others), so commit always finds the entry"
)
_W = "hicache._lru_walks."
_FL = "hicache.file_layout."
_FL_NAMING = _FL + "xǁFileNamingǁ"
_FL_LAYOUT = _FL + "xǁFileLayoutǁ"
_FK = "hicache.file_knowledge.xǁFileKnowledgeǁ"
_FN = "hicache.file_naming.xǁEngineNamingǁ"
_FST = "hicache.file_startup."
EQUIVALENT: dict[str, str] = {
    # _believe and as_chain moved from existence_cache.py to _lru_walks.py (one home for the LRU walks):
    # the run of _lru_walks.py on 2026-12-01 found the same five survivors under their new names.
    _W + "x_believe__mutmut_12": "excess >= 0: trimming 0 entries is a no-op",
    _W + "x_believe__mutmut_19": _FALSY,
    _W + "x_as_chain__mutmut_1": _FAST_PATH,
    _W + "x_as_chain__mutmut_2": _FAST_PATH,
    _W + "x_as_chain__mutmut_4": _FAST_PATH,
    _E + "x_check_cover__mutmut_3": _FAST_PATH,
    _E + "x_check_cover__mutmut_5": _FAST_PATH,
    _E_CLASS + "add__mutmut_22": _FAST_PATH,
    _E_CLASS + "covers_all__mutmut_15": (
        "the pages' keys always through _keys: for the primary pool _keys returns the pages themselves, so"
        " only the fast path (no key function) is skipped"
    ),
    _E_CLASS + "contains_all__mutmut_2": _FAST_PATH,
    _E_CLASS + "contains_all__mutmut_4": _FAST_PATH,
    "hicache.pool_beliefs.xǁPoolExistenceBeliefsǁcontains_all__mutmut_2": _FAST_PATH,
    "hicache.pool_beliefs.xǁPoolExistenceBeliefsǁcontains_all__mutmut_4": _FAST_PATH,
    **{
        f"hicache.file_store.xǁHiCacheFileǁbatch_set__mutmut_{n}": (
            "zip(..., strict=True) -> strict=None/False/absent: batch_set compared the two lengths and raised"
            " just before, so the zip never sees unequal lengths"
        )
        for n in (24, 27, 28)  # 13, 16, 17 before the split of HiCacheFile into units
    },
    _FS + "x__as_bytes__mutmut_8": _FAST_PATH,
    _FS + "x__as_bytes__mutmut_12": _FAST_PATH,
    _FS + "x__as_bytes__mutmut_13": _SIGNED_BYTES,
    _FS + "x__as_bytes__mutmut_18": _SIGNED_BYTES,
    _FS + "x__as_writable__mutmut_10": _FAST_PATH,
    _FS + "x__as_writable__mutmut_14": _FAST_PATH,
    # The whole run of file_store.py at 89e1263 (2026-12-04).
    _FS + "x__listed__mutmut_1": _FAST_PATH,
    _FS_CLASS + "_set__mutmut_56": _COMMIT_SIZE,
    # _set 62 and 64 before the split of HiCacheFile into units: the commit moved into FileKnowledge.settle.
    _FK + "settle__mutmut_7": _COMMIT_SIZE,
    _FK + "settle__mutmut_9": _COMMIT_SIZE,
    # __init__ 25 and _check_key 18, 25, 26 before the split of HiCacheFile into units: the namespace's
    # test moved into _arguments, the key's into FileNaming.check.
    _FS + "x__arguments__mutmut_31": _ALTSEP,
    # check 18 (the os.altsep test) went: "/" is os.altsep wherever there is one.  25, 26 are 21, 22 now.
    **{_FL_NAMING + f"check__mutmut_{n}": _STRICTER_PRECHECK for n in (21, 22)},
    _OS + "read_file__mutmut_15": _ONE_MORE_READ,
    _OS + "read_into__mutmut_16": _ONE_MORE_READ,
    _OS + "scandir__mutmut_3": "stat(follow_symlinks=None): only tested for truth, None is falsy like False",
    # The run of 2026-12-01, after the probes became one _look/_observe and the batches one _learn_many.
    **{
        _FS_CLASS + f"clear__mutmut_{n}": (
            "left = 1 / -= 1 / += 2 for += 1: left (the unremovable nodes that are not pages) is only"
            " tested for truth (not kept and not left), and after any failure each of them is non-zero"
        )
        for n in (30, 31, 32)  # 32, 33, 34 before the split of HiCacheFile into units
    },
    # The batch check of both namings (check_batch, once each naming's check_all, and before that
    # plainly_valid and check_keys' fallback): its join, and the characters each check_all passes it.
    "hicache.file_naming.x_check_batch__mutmut_2": _BATCH_SLOW_PATH,
    "hicache.file_naming.x_check_batch__mutmut_3": _JOINED_XXXX,
    **{_FL_NAMING + f"check_all__mutmut_{n}": _MORE_UNPLAIN for n in (11, 12)},
    _FN + "check_all__mutmut_9": _MORE_UNPLAIN,
    # The start-up scan's chunked naming (keys_of, e6c0009).
    _FL_NAMING + "keys_of__mutmut_3": (
        "slice(None) for the suffix's cut: each part is then the whole name, which ends in '.bin', so the '.'"
        " test sends every listing to key_of_name, which decides alone; only speed changes"
    ),
    _FL_NAMING + "keys_of__mutmut_16": _JOINED_XXXX,
    # EngineNaming (F10), its first run (51a11c1).
    _FN + "check__mutmut_7": (
        "type(None) is str: the plain-key path is never taken, and _size, which every other key takes,"
        " holds the same keys and gives the same size for them; only speed changes"
    ),
    _FL_LAYOUT + "pages__mutmut_21": (
        "unlisted.append(None) for the path: pages answers only how many subdirectories it could not list"
        " (the path was logged just before), and clear reads that count only for its truth"
    ),
    # The split of HiCacheFile into units: the survivors above that moved, under their new names
    # (each diff read again: the same mutation of the same line), and the new units' own.
    _FK + "on_disk__mutmut_3": _TOUCH_NONE,
    **{_FK + f"read__mutmut_{n}": _UNUSED_MARKS for n in (23, 24)},  # _read 25, 26 before the split
    **{
        _FST + name: "False -> None: only ever tested for truth, and None is falsy like False"
        for name in (
            "xǁFileStartupǁ_fanout_top__mutmut_5",  # marked
            "xǁFileStartupǁstep__mutmut_7",  # failed
            "xǁ_Scanǁ__init____mutmut_5",  # warned
            "xǁ_Scanǁ__init____mutmut_7",  # stop
        )
    },
    **{
        _FST + f"xǁFileStartupǁstep__mutmut_{n}": (
            "after a listing fails midway (failed = None/False instead of True, listings = None instead of an"
            " empty iterator, want = 2 instead of 1): the failure always leaves the batch short (islice stops"
            " at want without reading on), so the listing is dropped, the next one is asked of an exhausted"
            " or no longer read iterator, want stays above 0 and this same step ends the scan"
        )
        for n in (40, 41, 42, 60)
    },
    # The whole run of file_startup.py at 7534cb5 (2026-12-04): its own equivalents besides the flags above.
    _FST + "xǁFileStartupǁ_scan__mutmut_7": (
        "met = None instead of False: the answer is only tested for truth (start's elif; step ignores it)"
    ),
    **{
        _FST + f"xǁFileStartupǁ_scan__mutmut_{n}": (
            "zip(names, keys, strict=True) relaxed: keys_of answers a key per name, and a naming variant that"
            " answered too few would fail the zip of the chunk's nodes, keys and flags just below (strict)"
            " with the same ValueError"
        )
        for n in (47, 50, 51)
    },
    **{
        _FST + f"xǁFileStartupǁstart__mutmut_{n}": (
            "zip(keys, sizes, strict=True) relaxed: both are gathered in one order from the parallel lists of"
            " the pages found, one entry each per page"
        )
        for n in (33, 36, 37)
    },
    **{
        _FK + f"read_whole__mutmut_{n}": (
            "observe(found=None or True, removals=None) for a missing file: observe forgets a missing file"
            " (forget_missing, which reads only published) before it looks at found or removals"
        )
        for n in (23, 25, 33)
    },
    # _write_once 26 and 42 before the split of HiCacheFile into units.
    _FS_CLASS + "_write_once__mutmut_29": (
        "writing = None once the temp file is written: only tested for truth (writing and ENOSPC), and"
        " None is falsy like False"
    ),
    _FS_CLASS + "_write_once__mutmut_45": (
        "(None, True) when published: _write reads writing only when the attempt failed"
    ),
    # Survivors no test can kill: the mutant behaves exactly like the original (docs/MUTATION.md).
    # add's eviction moved into _insert (shared with add_many, M9): the run of 2026-12-01.
    _MC_CLASS + "_insert__mutmut_8": _FALSY,
    _MC_CLASS + "_insert__mutmut_10": _FALSY,
    _MC_CLASS + "_reclaim__mutmut_11": _FALSY,
    _MC_CLASS + "contains_many__mutmut_26": _UNUSED_NOW,
    _MC_CLASS + "contains_prefix__mutmut_7": _UNUSED_NOW,
    _MC_CLASS + "contains_prefix__mutmut_11": _SAME_BIRTHS,
    _MC_CLASS + "_specialized_contains__mutmut_5": _SAME_BIRTHS,
    _FE + "xǁ_Entryǁ__init____mutmut_4": (
        "published = None: only ever read for its truth (or copied between entries); None is falsy like False"
    ),
    # The runs of 2026-12-01, after the probe guards moved into _Overlaps (one removal context).  The
    # commit mark's old survivors (__init__ 74, commit 13, touch 20) went with it; removals starting at 1
    # (__init__ 2) is killed now: a fresh evictor, without the store's start-up eviction, says no removal
    # is under way.
    _FE + "xǁ_Overlapsǁ__init____mutmut_4": _FE_MARK,
    _FE + "xǁ_Overlapsǁpublish__mutmut_3": _FE_MARK,
    _FE_CLASS + "__init____mutmut_81": (
        "_walk_now starting as '' instead of None: every pass (_make_room, relieve) sets it to None before"
        " its walk, so the initial value is never read"
    ),
    _FE_CLASS + "_evict_one__mutmut_13": (
        "resting_until = '' instead of None once a rest is over: the unlink follows at once and either drops"
        " the entry or sets a new rest, so the value is never read"
    ),
}


def _copy_tree(target: Path) -> None:
    """The committed tree (``git archive HEAD``): others' unfinished edits never decide a mutant's fate."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", "HEAD", "hicache", "spec", "tests", "pyproject.toml"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)


def _configure(target: Path, module: str, tests: list[str]) -> None:
    """mutmut reads ``[tool.mutmut]`` from the copy's pyproject.toml (never the real one)."""
    quoted = ", ".join(json.dumps(t) for t in tests)
    with (target / "pyproject.toml").open("a") as f:
        f.write(
            "\n[tool.mutmut]\n"
            'source_paths = ["hicache/"]\n'
            f"only_mutate = [{json.dumps(module)}]\n"
            'also_copy = ["spec/"]\n'
            f"pytest_add_cli_args_test_selection = [{quoted}]\n"
            'pytest_add_cli_args = ["-p", "no:cacheprovider", "-x", "-q"]\n'
            # mutmut's CPU limit per mutant is (estimated test time + constant) x multiplier x 2.  Its
            # defaults (1 s, 15) let a mutant that loops forever (a batch walk whose index never moves) burn
            # about six minutes of CPU before it counts as detected; (time + 10 s) x 6 stops it in about two,
            # and leaves a mutant that is merely slower (a fast path turned off, a pytest process started on
            # a loaded machine) far from the limit: a timeout counts as a kill, so it must never be a guess.
            f"timeout_multiplier = {TIMEOUT_MULTIPLIER}\n"
            f"timeout_constant = {TIMEOUT_CONSTANT}\n"
        )


def _mutmut(target: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HYPOTHESIS_PROFILE": "mutation"}
    exe = Path(sys.executable).with_name("mutmut")
    return subprocess.run([str(exe), *args], cwd=target, env=env, capture_output=True, text=True)


def _head() -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()


def mutate(module: str, jobs: int, only: list[str] | None = None) -> dict[str, Any]:
    """Run mutmut over one module (or only the mutants named in ``only``); return its figures and
    survivors.  With ``only``, the figures cover those mutants alone."""
    tests = [t for t in SELECTIONS[module] if t.startswith("-") or (ROOT / t).exists()]
    target = SCRATCH / (Path(module).stem + ("-survivors" if only else ""))
    commit = _head()
    _copy_tree(target)
    _configure(target, module, tests)
    run = _mutmut(target, "run", "--max-children", str(jobs), *(only or []))
    (target / "run.log").write_text(run.stdout + run.stderr)
    if only:
        return {"commit": commit, "tests": tests, "survivors": _survivors(target)}
    _mutmut(target, "export-cicd-stats")
    stats_path = target / "mutants" / "mutmut-cicd-stats.json"
    if not stats_path.exists():
        raise RuntimeError(f"mutmut produced no stats for {module}; see {target / 'run.log'}")
    stats = json.loads(stats_path.read_text())
    survivors = _survivors(target)
    # A mutant that makes the tests hang (timeout) or crash (segfault) is detected: counted as killed.
    killed = sum(int(stats.get(k, 0)) for k in ("killed", "timeout", "segfault"))
    total = int(stats.get("total", 0)) - int(stats.get("skipped", 0))
    row = {"module": module, "commit": commit, "tests": tests, "killed": killed, "total": total}
    return _annotated({**row, "equivalent": 0, "stats": stats, "survivors": survivors})


def _survivors(target: Path) -> list[dict[str, str]]:
    listing = _mutmut(target, "results").stdout
    return [
        {"name": m[1], "status": m[2], "equivalent": "", "diff": _mutmut(target, "show", m[1]).stdout.strip()}
        for m in (
            re.match(r"\s*(\S+): (survived|no tests|suspicious)", line) for line in listing.splitlines()
        )
        if m
    ]


def _annotated(row: dict[str, Any]) -> dict[str, Any]:
    """``row``, its survivors marked equivalent or not from ``EQUIVALENT`` and counted (in place)."""
    for survivor in row["survivors"]:
        survivor["equivalent"] = EQUIVALENT.get(survivor["name"], "")
    row["equivalent"] = sum(1 for s in row["survivors"] if s["equivalent"])
    return row


def _changed_since(since: str, files: list[str]) -> list[str]:
    """Which of ``files`` differ between commit ``since`` and HEAD (SystemExit when git cannot tell)."""
    diff = subprocess.run(
        ["git", "diff", "--name-only", since, "HEAD", "--", *files], cwd=ROOT, capture_output=True, text=True
    )
    if diff.returncode != 0:
        raise SystemExit(f"cannot compare with {since}: {diff.stderr.strip()}")
    return diff.stdout.split()


def rerun_survivors(row: dict[str, Any], jobs: int, base: str | None) -> dict[str, Any]:
    """Run only the recorded survivors of ``row``'s module that ``EQUIVALENT`` does not explain again,
    with the tests as they are now.

    Sound only when, since the recorded run (commit ``base``, or the one the row names), the module and
    every test file of its selection then are unchanged: tests were only added, and an added test
    cannot revive a killed mutant.  Refused otherwise (run the whole module).
    """
    module, since = row["module"], base or row.get("commit")
    if not since:
        raise SystemExit(f"{module}: the recorded run names no commit; pass --base REV (its tree)")
    changed = _changed_since(since, [module, *(t for t in row["tests"] if not t.startswith("-"))])
    if changed:
        raise SystemExit(f"{module}: changed since {since}, run it whole: {' '.join(changed)}")
    # The survivors explained as equivalent stay survivors without running (each would only pay for every
    # test that reaches it); the others run.
    names = [s["name"] for s in row["survivors"] if not EQUIVALENT.get(s["name"])]
    if not names:
        return row  # nothing to run (and mutmut run without names would run every mutant)
    again = mutate(module, jobs, only=names)
    alive = {s["name"] for s in again["survivors"]}
    killed = row["killed"] + len(names) - len(alive)
    stats = dict(row["stats"])  # mutmut's counts, moved from each killed survivor's status to killed
    for survivor in row["survivors"]:
        if survivor["name"] in names and survivor["name"] not in alive:
            status = survivor["status"].replace(" ", "_")
            stats[status], stats["killed"] = stats[status] - 1, stats["killed"] + 1
    survivors = [s for s in row["survivors"] if s["name"] in alive or s["name"] not in names]
    rerun = (
        f"the {len(names)} unexplained survivors of the run at {since[:12]}, again with the tests of"
        f" {again['commit'][:12]}: {len(names) - len(alive)} killed"
    )
    again_row = {"commit": again["commit"], "tests": again["tests"], "killed": killed, "stats": stats}
    return _annotated({**row, **again_row, "survivors": survivors, "rerun": rerun})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__package__}.mutation", description=__doc__)
    parser.add_argument("modules", nargs="*", help=f"any of {', '.join(SELECTIONS)} (default: all)")
    parser.add_argument("--jobs", type=int, default=1, help="mutmut workers (default 1: the CPU is shared)")
    parser.add_argument(
        "--annotate",
        action="store_true",
        help="run nothing: mark the recorded survivors equivalent or not from EQUIVALENT as it is now",
    )
    parser.add_argument(
        "--survivors",
        action="store_true",
        help="run only the recorded survivors of each module again (after tests were only added)",
    )
    parser.add_argument("--base", help="with --survivors: the commit of the recorded run, if it names none")
    args = parser.parse_args(argv)
    if args.survivors:
        latest = json.loads(SCORE.read_text())
        rows = {row["module"]: row for row in latest["modules"]}
        for module in args.modules or sorted(rows):
            print(f"re-running the survivors of {module} ...", flush=True)
            rows[module] = rerun_survivors(rows[module], args.jobs, args.base)
            print(f"  {rows[module]['rerun']}", flush=True)
        return _record(rows)
    if args.annotate:
        if not SCORE.exists():
            parser.error(f"nothing recorded yet: {SCORE.relative_to(ROOT)} is missing")
        recorded = json.loads(SCORE.read_text())
        return _record({row["module"]: _annotated(row) for row in recorded["modules"]}, recorded["recorded"])
    modules = args.modules or [m for m in SELECTIONS if (ROOT / m).exists()]
    unknown = [m for m in modules if m not in SELECTIONS]
    if unknown:
        parser.error(f"no test selection for {unknown}; known: {sorted(SELECTIONS)}")
    per_module: dict[str, dict[str, Any]] = {}
    for module in modules:
        print(f"mutating {module} ...", flush=True)
        result = mutate(module, args.jobs)
        per_module[module] = result
        print(
            f"  {result['killed']}/{result['total']} killed, {len(result['survivors'])} survivors"
            f" ({result['equivalent']} equivalent)",
            flush=True,
        )
        for survivor in result["survivors"]:
            mark = "equivalent" if survivor["equivalent"] else survivor["status"].upper()
            print(f"    {mark}: {survivor['name']}")
    # Merge into the file as it is now, not as it was at the start: another run (another module) may have
    # recorded its figures meanwhile.
    latest = json.loads(SCORE.read_text()) if SCORE.exists() else {}
    return _record({**{m["module"]: m for m in latest.get("modules", [])}, **per_module})


def _record(per_module: dict[str, dict[str, Any]], recorded: str | None = None) -> int:
    """Write the score file from per-module results; print the total; 0 when >= 95% of the killable."""
    rows = [per_module[m] for m in sorted(per_module)]
    killed, total = sum(r["killed"] for r in rows), sum(r["total"] for r in rows)
    equivalent = sum(r.get("equivalent", 0) for r in rows)
    killable = total - equivalent
    record = {
        "tool": "mutmut " + _version(),
        "recorded": recorded or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "hypothesis_profile": "mutation",
        "killed": killed,
        "total": total,
        "score": round(100.0 * killed / total, 1) if total else 0.0,
        "equivalent": equivalent,
        "score_without_equivalent": round(100.0 * killed / killable, 1) if killable else 0.0,
        "paths": [r["module"] for r in rows],
        "modules": rows,
    }
    SCORE.parent.mkdir(parents=True, exist_ok=True)
    SCORE.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    print(
        f"mutation score: {killed}/{total} killed ({record['score']}%); {equivalent} equivalent survivors,"
        f" so {killed}/{killable} of the killable ({record['score_without_equivalent']}%);"
        f" recorded in {SCORE.relative_to(ROOT)}"
    )
    return 0 if killable and killed / killable >= 0.95 else 1


def _version() -> str:
    try:
        return version("mutmut")
    except PackageNotFoundError:
        return "?"


if __name__ == "__main__":
    raise SystemExit(main())
