"""File store configuration (F9, B1): every setting, precedence, aliases and every invalid value.

Every test passes ``environ`` explicitly, so the real environment never leaks in;
one test checks that ``environ=None`` reads ``os.environ``.
"""

from __future__ import annotations

import math
import pathlib
import re
from typing import Any

import pytest

from hicache import FileStoreConfig, load_file_config, parse_size
from hicache.file_config import ALIAS_ENV_PREFIX, ENV_PREFIX
from hicache.file_store import HiCacheFile

pytestmark = pytest.mark.clauses("F9", "B1")

DEFAULTS = FileStoreConfig("/tmp/hicache", 0, 0, 0.9, False, 5.0, 3600.0)

# setting -> (environment suffix, a valid string, the value it parses to, a valid extra_config value, parsed)
SETTINGS: dict[str, tuple[str, str, object, object, object]] = {
    "storage_dir": ("STORAGE_DIR", "/data/env", "/data/env", "/data/extra", "/data/extra"),
    "max_size": ("MAX_SIZE", "200G", 200 * 10**9, 1 << 30, 1 << 30),
    "min_free_space": ("MIN_FREE_SPACE", "1Gi", 1 << 30, "10M", 10**7),
    "eviction_ratio": ("EVICTION_RATIO", "0.5", 0.5, 0.75, 0.75),
    "enable_metadata_cache": ("ENABLE_METADATA_CACHE", "true", True, True, True),
    "metadata_ttl": ("METADATA_TTL", "-1", -1.0, 2.5, 2.5),
    "temp_max_age": ("TEMP_MAX_AGE", "60", 60.0, 0, 0.0),
    "metadata_eviction": ("METADATA_EVICTION", " LRU ", "lru", "lru", "lru"),
    "layout": ("LAYOUT", " Fanout ", "fanout", "fanout", "fanout"),
    "startup_scan": ("STARTUP_SCAN", " Background ", "background", "background", "background"),
}


def test_with_nothing_set_every_setting_has_its_documented_default() -> None:
    assert load_file_config(None, {}) == DEFAULTS
    assert load_file_config({}, {}) == DEFAULTS


@pytest.mark.parametrize("setting", SETTINGS)
def test_each_setting_is_read_from_its_environment_variable(setting: str) -> None:
    suffix, text, parsed, _, _ = SETTINGS[setting]
    config = load_file_config({}, {ENV_PREFIX + suffix: text})
    assert getattr(config, setting) == parsed
    others = {name for name in SETTINGS if name != setting}
    assert all(getattr(config, name) == getattr(DEFAULTS, name) for name in others)


@pytest.mark.parametrize("setting", SETTINGS)
def test_each_setting_is_read_from_its_sglang_alias(setting: str) -> None:
    suffix, text, parsed, _, _ = SETTINGS[setting]
    config = load_file_config({}, {ALIAS_ENV_PREFIX + suffix: text})
    assert getattr(config, setting) == parsed


@pytest.mark.parametrize("setting", SETTINGS)
def test_extra_config_takes_precedence_over_the_environment_and_both_aliases(setting: str) -> None:
    suffix, text, _, extra, parsed = SETTINGS[setting]
    environ = {ENV_PREFIX + suffix: text, ALIAS_ENV_PREFIX + suffix: text}
    config = load_file_config({setting: extra}, environ)
    assert getattr(config, setting) == parsed


@pytest.mark.parametrize("setting", SETTINGS)
def test_extra_config_alone_sets_each_setting(setting: str) -> None:
    _, _, _, extra, parsed = SETTINGS[setting]
    assert getattr(load_file_config({setting: extra}, {}), setting) == parsed


def test_extra_config_wins_even_over_an_invalid_environment_value_it_shadows() -> None:
    config = load_file_config({"max_size": 10}, {"HICACHE_FILE_MAX_SIZE": "lots"})
    assert config.max_size == 10


def test_precedence_is_decided_per_setting_not_per_source() -> None:
    environ = {"HICACHE_FILE_MAX_SIZE": "5G", "SGLANG_HICACHE_FILE_BACKEND_METADATA_TTL": "7"}
    config = load_file_config({"storage_dir": "/x"}, environ)
    assert (config.storage_dir, config.max_size, config.metadata_ttl) == ("/x", 5 * 10**9, 7.0)
    assert config.eviction_ratio == 0.9  # from the defaults


def test_both_aliases_set_to_the_same_string_is_accepted() -> None:
    environ = {"HICACHE_FILE_MAX_SIZE": "2G", "SGLANG_HICACHE_FILE_BACKEND_MAX_SIZE": "2G"}
    assert load_file_config({}, environ).max_size == 2 * 10**9


def test_both_aliases_set_to_different_strings_is_an_error_naming_both() -> None:
    environ = {"HICACHE_FILE_MAX_SIZE": "2G", "SGLANG_HICACHE_FILE_BACKEND_MAX_SIZE": "3G"}
    with pytest.raises(
        ValueError, match=r"HICACHE_FILE_MAX_SIZE='2G'.*SGLANG_HICACHE_FILE_BACKEND_MAX_SIZE='3G'"
    ):
        load_file_config({}, environ)


def test_alias_conflict_is_an_error_even_when_extra_config_sets_another_setting() -> None:
    environ = {"HICACHE_FILE_METADATA_TTL": "1", "SGLANG_HICACHE_FILE_BACKEND_METADATA_TTL": "2"}
    with pytest.raises(ValueError, match="metadata_ttl"):
        load_file_config({"max_size": 1}, environ)


def test_alias_conflict_shadowed_by_extra_config_is_not_consulted() -> None:
    environ = {"HICACHE_FILE_METADATA_TTL": "1", "SGLANG_HICACHE_FILE_BACKEND_METADATA_TTL": "2"}
    assert load_file_config({"metadata_ttl": 3}, environ).metadata_ttl == 3.0


def test_environ_none_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HICACHE_FILE_STORAGE_DIR", "/from/os/environ")
    monkeypatch.delenv("SGLANG_HICACHE_FILE_BACKEND_STORAGE_DIR", raising=False)
    assert load_file_config().storage_dir == "/from/os/environ"


def test_storage_dir_accepts_a_path_object() -> None:
    assert load_file_config({"storage_dir": pathlib.Path("/a/b")}, {}).storage_dir == "/a/b"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("200G", 200 * 10**9),
        ("1Gi", 1 << 30),
        ("1.5G", 1_500_000_000),
        ("1.5Gi", 3 << 29),
        ("1048576", 1 << 20),
        ("", 0),
        ("   ", 0),
        ("0", 0),
        ("0G", 0),
        ("1k", 1000),
        ("1K", 1000),
        ("1Ki", 1024),
        ("2M", 2 * 10**6),
        ("2Mi", 2 << 20),
        ("3T", 3 * 10**12),
        ("3Ti", 3 << 40),
        ("1P", 10**15),
        ("1Pi", 1 << 50),
        ("200GB", 200 * 10**9),
        ("1GiB", 1 << 30),
        ("1gib", 1 << 30),
        ("512B", 512),
        (" 4 G ", 4 * 10**9),
        (".5K", 500),
        ("1.", 1),
        ("0.1Gi", 107_374_182),  # 107374182.4 bytes: fractions round down to whole bytes
        ("1.1G", 1_100_000_000),  # exact decimal arithmetic, no float rounding
    ],
)
def test_size_strings_use_decimal_k_m_g_and_binary_ki_mi_gi(text: str, expected: int) -> None:
    assert parse_size("max_size", text) == expected


def test_size_ints_are_bytes_and_zero_disables() -> None:
    assert parse_size("max_size", 0) == 0
    assert parse_size("max_size", 123) == 123
    assert parse_size("max_size", 2**63 - 1) == 2**63 - 1  # the largest file offset; beyond: ValueError


@pytest.mark.parametrize(
    "text",
    [
        "lots",
        "-1",
        "-1G",
        "+1G",
        "1.5",
        "1e9",
        "1E9",
        "inf",
        "nan",
        "1X",
        "1Gib2",
        "G",
        "1 000",
        "1,5G",
        "0x10",
        "1iB",
    ],
)
@pytest.mark.parametrize("setting", ["max_size", "min_free_space"])
def test_bad_size_strings_are_value_errors_naming_the_setting_and_the_value(setting: str, text: str) -> None:
    with pytest.raises(ValueError, match=rf"{setting}.*{_escaped(text)}"):
        parse_size(setting, text)
    with pytest.raises(ValueError, match=rf"{setting}.*{_escaped(text)}"):
        load_file_config({setting: text}, {})
    suffix = SETTINGS[setting][0]
    with pytest.raises(ValueError, match=rf"{setting} \(from HICACHE_FILE_{suffix}\).*{_escaped(text)}"):
        load_file_config({}, {ENV_PREFIX + suffix: text})
    with pytest.raises(ValueError, match=rf"SGLANG_HICACHE_FILE_BACKEND_{suffix}.*{_escaped(text)}"):
        load_file_config({}, {ALIAS_ENV_PREFIX + suffix: text})


@pytest.mark.parametrize("setting", ["max_size", "min_free_space"])
def test_negative_int_sizes_are_value_errors(setting: str) -> None:
    with pytest.raises(ValueError, match=rf"{setting}.*-1"):
        load_file_config({setting: -1}, {})


@pytest.mark.parametrize("value", [1.5, 1.0, True, None, b"1G", [1]])
@pytest.mark.parametrize("setting", ["max_size", "min_free_space"])
def test_sizes_of_other_types_are_type_errors(setting: str, value: object) -> None:
    with pytest.raises(TypeError, match=setting):
        load_file_config({setting: value}, {})


@pytest.mark.parametrize("text", ["0", "-0.1", "1.01", "2", "nan", "NaN", "inf", "-inf", "", "half", "0.5x"])
def test_eviction_ratio_outside_zero_exclusive_to_one_inclusive_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError, match=rf"eviction_ratio.*{_escaped(text)}"):
        load_file_config({}, {"HICACHE_FILE_EVICTION_RATIO": text})
    with pytest.raises(ValueError, match="eviction_ratio"):
        load_file_config({"eviction_ratio": text}, {})


@pytest.mark.parametrize("value", [0, 0.0, -0.5, 1.5, math.nan, math.inf, 10**400])
def test_eviction_ratio_numbers_out_of_range_in_extra_config_are_value_errors(value: float) -> None:
    with pytest.raises(ValueError, match="eviction_ratio"):
        load_file_config({"eviction_ratio": value}, {})


def test_eviction_ratio_one_is_accepted_and_a_string_is_parsed() -> None:
    assert load_file_config({"eviction_ratio": 1}, {}).eviction_ratio == 1.0
    assert load_file_config({"eviction_ratio": " 0.25 "}, {}).eviction_ratio == 0.25


@pytest.mark.parametrize("text", ["-2", "-1.5", "-0.001", "nan", "inf", "-inf", "", "soon"])
def test_metadata_ttl_other_than_minus_one_or_finite_non_negative_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError, match=rf"metadata_ttl.*{_escaped(text)}"):
        load_file_config({}, {"SGLANG_HICACHE_FILE_BACKEND_METADATA_TTL": text})
    with pytest.raises(ValueError, match="metadata_ttl"):
        load_file_config({"metadata_ttl": text}, {})


@pytest.mark.parametrize(("text", "expected"), [("-1", -1.0), ("-1.0", -1.0), ("0", 0.0), ("0.25", 0.25)])
def test_metadata_ttl_accepts_minus_one_and_finite_non_negative_numbers(text: str, expected: float) -> None:
    assert load_file_config({}, {"HICACHE_FILE_METADATA_TTL": text}).metadata_ttl == expected


@pytest.mark.parametrize("text", ["-1", "-0.5", "nan", "inf", "", "hour"])
def test_temp_max_age_that_is_not_a_finite_non_negative_number_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError, match=rf"temp_max_age.*{_escaped(text)}"):
        load_file_config({}, {"HICACHE_FILE_TEMP_MAX_AGE": text})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        *[("1", True), ("true", True), ("TRUE", True), (" yes ", True), ("On", True)],
        *[("0", False), ("false", False), ("False", False), ("no", False), ("OFF", False)],
    ],
)
def test_enable_metadata_cache_accepts_the_usual_boolean_words(text: str, expected: bool) -> None:
    assert (
        load_file_config({}, {"HICACHE_FILE_ENABLE_METADATA_CACHE": text}).enable_metadata_cache is expected
    )
    assert load_file_config({"enable_metadata_cache": text}, {}).enable_metadata_cache is expected


@pytest.mark.parametrize("text", ["maybe", "", "2", "-1", "t", "enabled", "yes please"])
def test_bad_booleans_are_value_errors_naming_the_setting_and_the_value(text: str) -> None:
    with pytest.raises(ValueError, match=rf"enable_metadata_cache.*{_escaped(text)}"):
        load_file_config({}, {"SGLANG_HICACHE_FILE_BACKEND_ENABLE_METADATA_CACHE": text})
    with pytest.raises(ValueError, match="enable_metadata_cache"):
        load_file_config({"enable_metadata_cache": text}, {})


@pytest.mark.parametrize("value", [1, 0, 1.0, None, [True]])
def test_enable_metadata_cache_of_a_non_bool_type_is_a_type_error(value: object) -> None:
    with pytest.raises(TypeError, match="enable_metadata_cache"):
        load_file_config({"enable_metadata_cache": value}, {})


@pytest.mark.parametrize("text", ["", "/tmp/a\0b"])
def test_empty_or_nul_storage_dir_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="storage_dir"):
        load_file_config({}, {"HICACHE_FILE_STORAGE_DIR": text})
    with pytest.raises(ValueError, match="storage_dir"):
        load_file_config({"storage_dir": text}, {})


@pytest.mark.parametrize("value", [None, 1, b"/tmp/x", pathlib.PurePosixPath("/x").as_posix().encode()])
def test_storage_dir_of_a_wrong_type_is_a_type_error(value: object) -> None:
    with pytest.raises(TypeError, match="storage_dir"):
        load_file_config({"storage_dir": value}, {})


@pytest.mark.parametrize("setting", ["eviction_ratio", "metadata_ttl", "temp_max_age"])
@pytest.mark.parametrize("value", [True, None, b"1", [0.5]])
def test_numbers_of_a_wrong_type_in_extra_config_are_type_errors(setting: str, value: object) -> None:
    with pytest.raises(TypeError, match=setting):
        load_file_config({setting: value}, {})


@pytest.mark.parametrize(
    "key", ["max_sise", "HICACHE_FILE_MAX_SIZE", "SGLANG_HICACHE_FILE_BACKEND_MAX_SIZE", ""]
)
def test_unknown_extra_config_keys_including_environment_names_are_value_errors(key: str) -> None:
    with pytest.raises(ValueError, match=rf"unknown setting {key!r}"):
        load_file_config({key: "1G"}, {})


def test_non_string_extra_config_keys_and_non_mapping_extra_config_are_type_errors() -> None:
    bad_keys: Any = {1: "x"}
    with pytest.raises(TypeError, match="extra_config keys"):
        load_file_config(bad_keys, {})
    not_a_mapping: Any = [("max_size", 1)]
    with pytest.raises(TypeError, match="extra_config"):
        load_file_config(not_a_mapping, {})


def test_unrelated_environment_variables_are_ignored() -> None:
    environ = {"HICACHE_FILE_SOMETHING_ELSE": "x", "SGLANG_HICACHE_FILE_BACKEND_OTHER": "y", "PATH": "/bin"}
    assert load_file_config({}, environ) == DEFAULTS


@pytest.mark.clauses("F1-fanout")
@pytest.mark.parametrize(
    ("given", "error", "message"),
    [
        ({"layout": "tree"}, ValueError, "extra_config['layout'] must be 'flat' or 'fanout', got 'tree'"),
        ({"layout": ""}, ValueError, "extra_config['layout'] must be 'flat' or 'fanout', got ''"),
        ({"layout": 2}, TypeError, "extra_config['layout'] must be a str, 'flat' or 'fanout', got int 2"),
    ],
)
def test_a_bad_layout_is_an_error_naming_the_setting(
    given: dict[str, object], error: type, message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        load_file_config(given, {})
    if isinstance(given["layout"], str):
        with pytest.raises(error, match=re.escape("layout (from HICACHE_FILE_LAYOUT) must be")):
            load_file_config({}, {"HICACHE_FILE_LAYOUT": given["layout"]})


@pytest.mark.clauses("F8-bg")
@pytest.mark.parametrize(
    ("given", "error", "message"),
    [
        (
            {"startup_scan": "lazy"},
            ValueError,
            "extra_config['startup_scan'] must be 'blocking' or 'background', got 'lazy'",
        ),
        (
            {"startup_scan": ""},
            ValueError,
            "extra_config['startup_scan'] must be 'blocking' or 'background', got ''",
        ),
        (
            {"startup_scan": True},
            TypeError,
            "extra_config['startup_scan'] must be a str, 'blocking' or 'background', got bool True",
        ),
    ],
)
def test_a_bad_startup_scan_is_an_error_naming_the_setting(
    given: dict[str, object], error: type, message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        load_file_config(given, {})
    if isinstance(given["startup_scan"], str):
        with pytest.raises(error, match=re.escape("startup_scan (from HICACHE_FILE_STARTUP_SCAN) must be")):
            load_file_config({}, {"HICACHE_FILE_STARTUP_SCAN": given["startup_scan"]})


def test_the_config_is_frozen() -> None:
    config = load_file_config({}, {})
    with pytest.raises(AttributeError):
        config.max_size = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("storage_dir", "", ValueError),
        ("storage_dir", 3, TypeError),
        ("max_size", -1, ValueError),
        ("max_size", 1.0, TypeError),
        ("min_free_space", True, TypeError),
        ("eviction_ratio", 0.0, ValueError),
        ("eviction_ratio", math.nan, ValueError),
        ("eviction_ratio", "0.5", TypeError),
        ("enable_metadata_cache", 1, TypeError),
        ("metadata_ttl", -2.0, ValueError),
        ("metadata_ttl", math.inf, ValueError),
        ("temp_max_age", -1.0, ValueError),
        ("layout", "tree", ValueError),
        ("layout", 2, TypeError),
        ("startup_scan", "lazy", ValueError),
        ("startup_scan", None, TypeError),
    ],
)
def test_constructing_the_config_directly_checks_every_field(field: str, value: object, error: type) -> None:
    fields: dict[str, Any] = dict(DEFAULTS.__dict__)
    fields[field] = value
    with pytest.raises(error, match=field):
        FileStoreConfig(**fields)


def test_constructing_the_config_directly_normalizes_int_numbers_to_floats() -> None:
    config = FileStoreConfig("/d", 1, 2, 1, True, -1, 0)
    assert (config.eviction_ratio, config.metadata_ttl, config.temp_max_age) == (1.0, -1.0, 0.0)
    assert all(
        isinstance(x, float) for x in (config.eviction_ratio, config.metadata_ttl, config.temp_max_age)
    )


def _escaped(text: str) -> str:
    return re.escape(repr(text))


def test_the_store_reads_its_directory_from_the_environment_when_storage_dir_is_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    monkeypatch.delenv("HICACHE_FILE_STORAGE_DIR", raising=False)
    monkeypatch.setenv("SGLANG_HICACHE_FILE_BACKEND_STORAGE_DIR", str(tmp_path / "from-env"))
    store = HiCacheFile()
    assert store.directory == str(tmp_path / "from-env")
    assert (tmp_path / "from-env").is_dir()
    overridden = HiCacheFile(extra_config={"storage_dir": str(tmp_path / "from-extra")})
    assert overridden.directory == str(tmp_path / "from-extra")


@pytest.mark.parametrize(
    ("variable", "text"),
    [("HICACHE_FILE_MAX_SIZE", "lots"), ("SGLANG_HICACHE_FILE_BACKEND_EVICTION_RATIO", "0")],
)
def test_an_invalid_environment_value_fails_the_store_at_construction_before_any_io(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, variable: str, text: str
) -> None:
    monkeypatch.setenv(variable, text)
    with pytest.raises(ValueError, match=_escaped(text)):
        HiCacheFile(tmp_path / "never-created")
    assert not (tmp_path / "never-created").exists()
