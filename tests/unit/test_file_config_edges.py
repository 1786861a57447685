"""File store configuration edges pinned for mutation testing (docs/MUTATION.md): the exact message of
every bad type (F9, B1), naming the setting, the type and the value as given."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from hicache.file_config import FileStoreConfig, load_file_config, parse_size


def _config(**changes: Any) -> FileStoreConfig:
    fields: dict[str, Any] = {
        "storage_dir": "/tmp/hicache",
        "max_size": 0,
        "min_free_space": 0,
        "eviction_ratio": 0.9,
        "enable_metadata_cache": False,
        "metadata_ttl": 5.0,
    }
    return FileStoreConfig(**{**fields, **changes})


@pytest.mark.clauses("F9", "B1")
@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: _config(storage_dir=3), TypeError, "storage_dir must be a str, got int 3"),
        (
            lambda: _config(storage_dir=""),
            ValueError,
            "storage_dir must be a non-empty directory path, got ''",
        ),
        (lambda: _config(max_size="1"), TypeError, "max_size must be an int, got str '1'"),
        (
            lambda: _config(enable_metadata_cache=1),
            TypeError,
            "enable_metadata_cache must be a bool, got int 1",
        ),
        (lambda: _config(metadata_ttl="5"), TypeError, "metadata_ttl must be a number, got str '5'"),
        (
            lambda: _config(eviction_ratio=2),
            ValueError,
            "eviction_ratio must be in (0, 1], got 2",
        ),
        (
            lambda: parse_size("max_size", 1.5),
            TypeError,
            "max_size must be an int or a size string, got float 1.5",
        ),
        (
            lambda: load_file_config([], environ={}),  # type: ignore[arg-type]
            TypeError,
            "extra_config must be a mapping or None, got list",
        ),
        (
            lambda: load_file_config({1: 2}, environ={}),  # type: ignore[dict-item]
            TypeError,
            "extra_config keys must be str, got int 1",
        ),
        (
            lambda: load_file_config({"storage_dir": 3}, environ={}),
            TypeError,
            "extra_config['storage_dir'] must be a str or os.PathLike of str, got int 3",
        ),
        (
            lambda: load_file_config({"metadata_ttl": [1]}, environ={}),
            TypeError,
            "extra_config['metadata_ttl'] must be a number, got list [1]",
        ),
        (
            lambda: load_file_config({"enable_metadata_cache": 2.5}, environ={}),
            TypeError,
            "extra_config['enable_metadata_cache'] must be a bool or a boolean string, got float 2.5",
        ),
        (lambda: _config(max_size=-1), ValueError, "max_size must be >= 0 bytes, got -1"),
        (
            lambda: _config(storage_dir="a\0b"),
            ValueError,
            "storage_dir must not contain a NUL character, got 'a\\x00b'",
        ),
        (
            lambda: load_file_config({"max_sise": 1}, environ={}),
            ValueError,
            "extra_config has an unknown setting 'max_sise' (value 1); known settings: storage_dir,"
            " max_size, min_free_space, eviction_ratio, enable_metadata_cache, metadata_ttl, temp_max_age,"
            " shared_group, max_value_size, metadata_eviction, layout, startup_scan",
        ),
        (
            lambda: load_file_config(
                {}, environ={"HICACHE_FILE_MAX_SIZE": "1", "SGLANG_HICACHE_FILE_BACKEND_MAX_SIZE": "2"}
            ),
            ValueError,
            "max_size: HICACHE_FILE_MAX_SIZE='1' and its alias SGLANG_HICACHE_FILE_BACKEND_MAX_SIZE='2'"
            " disagree; set one of them",
        ),
        # B1: sizes beyond any file offset, and numbers of any size, shown shortened
        (
            lambda: load_file_config({"max_size": 10**400}, environ={}),
            ValueError,
            "extra_config['max_size'] must be at most 2**63 - 1 bytes,"
            " got 10000000000000000000...0000000000 (401 digits)",
        ),
        (
            lambda: load_file_config({}, environ={"HICACHE_FILE_MIN_FREE_SPACE": "10000P"}),
            ValueError,
            "min_free_space (from HICACHE_FILE_MIN_FREE_SPACE) must be at most 2**63 - 1 bytes, got '10000P'",
        ),
        (
            lambda: _config(max_size=2**63),
            ValueError,
            "max_size must be at most 2**63 - 1 bytes, got 9223372036854775808",
        ),
        (
            lambda: load_file_config({"metadata_ttl": -(10**5000)}, environ={}),
            ValueError,
            "extra_config['metadata_ttl'] is out of range, got -<an int of 16610 bits>",
        ),
    ],
)
def test_each_bad_setting_is_rejected_with_an_exact_message(
    call: Callable[[], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()


@pytest.mark.clauses("F9", "B1")
def test_an_unknown_setting_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"known settings: storage_dir, max_size, min_free_space, "):
        load_file_config({"max_sise": 1}, environ={})


@pytest.mark.clauses("F9", "B1")
def test_the_largest_file_offset_is_a_valid_size() -> None:
    assert parse_size("max_size", 2**63 - 1) == 2**63 - 1
    assert _config(max_size=2**63 - 1, min_free_space=2**63 - 1).min_free_space == 2**63 - 1
