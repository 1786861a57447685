"""The engine release's ``LRUFileEvictor``, loaded from its wheel without ``sglang`` or torch (issue 11, 24).

Shared by the oracle's engine test (``tests/oracle/test_engine_evictor.py``) and the scale benchmark
(``benchmarks/bench_scale.py``).  The wheel is downloaded once (``pip download sglang --no-deps``) into
``~/.cache/hicache-oracle/sglang`` (``HICACHE_WHEEL_CACHE`` to change it) and reused; only the module that
defines ``LRUFileEvictor`` is read from it, and it is executed unmodified under a name of ours, with the two
names it imports from ``sglang`` stubbed while it loads (every limit is passed through ``extra_config``, so
neither is used).  Nothing of it is copied into the project.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = [
    "MODULE_NAME",
    "WheelUnavailable",
    "cache_dir",
    "load_engine_evictor",
    "registry_wheel",
    "unload",
    "wheel",
]

MODULE_NAME = "hicache_oracle_engine_lru_file_evictor"  # the engine module, loaded under a name of ours
_STUBS = ("sglang", "sglang.srt", "sglang.srt.environ", "sglang.srt.utils", "sglang.srt.utils.common")


class WheelUnavailable(RuntimeError):
    """The wheel is not cached and cannot be downloaded (the message says why)."""


def cache_dir() -> Path:
    """Where the wheel is kept: ``HICACHE_WHEEL_CACHE``, else ``~/.cache/hicache-oracle/sglang``."""
    return Path(os.environ.get("HICACHE_WHEEL_CACHE", Path.home() / ".cache" / "hicache-oracle" / "sglang"))


def wheel(cache: Path | None = None) -> Path:
    """The cached sglang wheel, downloaded first if there is none (``WheelUnavailable`` when it cannot be)."""
    return registry_wheel("sglang", "sglang", cache_dir() if cache is None else cache)


def registry_wheel(project: str, requirement: str, cache: Path) -> Path:
    """The newest wheel of ``project`` in ``cache``, downloaded first (``pip download requirement --no-deps``)
    if there is none; ``WheelUnavailable`` saying why when it cannot be."""
    pattern = f"{project.replace('-', '_')}-*.whl"
    found = sorted(cache.glob(pattern))
    if found:
        return found[-1]
    cache.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", requirement, "--no-deps", "-d", str(cache), "-q"]
    try:
        subprocess.run(command, check=True, capture_output=True, text=True, timeout=600)
    except subprocess.CalledProcessError as error:
        tail = " ".join((error.stderr or error.stdout or "").split()[-30:])
        raise WheelUnavailable(
            f"cannot download the {project} wheel from the package registry: {tail}"
        ) from None
    except (OSError, subprocess.TimeoutExpired) as error:
        raise WheelUnavailable(f"cannot run pip download {requirement}: {error}") from None
    found = sorted(cache.glob(pattern))
    if not found:
        raise WheelUnavailable(f"pip download {requirement} left no wheel in {cache}")
    return found[-1]


class _Stub:
    """Whatever the engine module asks of ``sglang`` while it loads (``envs.X.get()``: None)."""

    def __getattr__(self, name: str) -> _Stub:
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        return None


def load_engine_evictor(path: Path | None = None) -> ModuleType:
    """The wheel's evictor module, executed as the wheel has it and registered as ``MODULE_NAME`` in
    ``sys.modules`` (the oracle finds the evictor's module by its class's ``__module__``; ``unload`` ends
    that).  ``WheelUnavailable`` without a wheel; ``LookupError`` when no module of it defines the class."""
    path = wheel() if path is None else path
    with zipfile.ZipFile(path) as archive:
        # The modules named like an evictor first (sglang/srt/mem_cache/storage/file/lru_file_evictor.py in
        # 0.5.23), then every other one: the first that defines the class.
        names = sorted((n for n in archive.namelist() if n.endswith(".py")), key=lambda n: "evictor" not in n)
        found = next(((n, text) for n in names if b"class LRUFileEvictor" in (text := archive.read(n))), None)
    if found is None:
        raise LookupError(f"{path.name} has no module defining LRUFileEvictor")
    inner, source = found
    saved = {name: sys.modules.get(name) for name in _STUBS}
    for name in _STUBS:
        stub = ModuleType(name)
        stub.__getattr__ = lambda attribute: _Stub()  # type: ignore[method-assign]
        sys.modules[name] = stub
    module = ModuleType(MODULE_NAME)
    module.__file__ = f"{path}/{inner}"
    try:
        exec(compile(source, module.__file__, "exec"), module.__dict__)  # the module, as the wheel has it
    finally:
        for name, previous in saved.items():
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous
    sys.modules[MODULE_NAME] = module
    return module


def unload() -> None:
    """Forget the module ``load_engine_evictor`` registered."""
    sys.modules.pop(MODULE_NAME, None)


# -- the engine's storage modules, under their own names ------------------------------------------------

# The wheel's modules that the engine's storage backends are made of, loaded as the wheel has them; their
# packages are namespace stand-ins (the wheel's ``sglang/__init__.py`` pulls in the whole engine), and of
# the rest of the engine only ``sglang.srt.utils.common.human_readable_int`` is a stand-in of ours.
STORAGE_MODULES = (
    "sglang.srt.environ",
    "sglang.srt.mem_cache.hicache_storage",
    "sglang.srt.mem_cache.storage.backend_factory",
    "sglang.srt.mem_cache.storage",
    "sglang.srt.mem_cache.storage.file.lru_file_evictor",
    "sglang.srt.mem_cache.storage.file",
)
_PACKAGES = ("sglang", "sglang.srt", "sglang.srt.mem_cache")
_STAND_INS = ("sglang.srt.utils", "sglang.srt.utils.common")


def _source_dir(path: Path) -> Path:
    """The wheel's storage sources, extracted once beside the wheel (byte for byte, never edited)."""
    target = path.parent / f"{path.stem}-storage-src"
    wanted = {
        "sglang/srt/environ.py",
        "sglang/srt/mem_cache/hicache_storage.py",
        "sglang/srt/mem_cache/storage/__init__.py",
        "sglang/srt/mem_cache/storage/backend_factory.py",
        "sglang/srt/mem_cache/storage/file/__init__.py",
        "sglang/srt/mem_cache/storage/file/lru_file_evictor.py",
    }
    if all((target / name).is_file() for name in wanted):
        return target
    with zipfile.ZipFile(path) as archive:
        missing = wanted - set(archive.namelist())
        if missing:
            raise LookupError(f"{path.name} lacks {', '.join(sorted(missing))}")
        partial = target.with_name(target.name + f".{os.getpid()}.partial")
        for name in wanted:
            archive.extract(name, partial)
    try:
        partial.rename(target)
    except OSError:  # another process extracted it first
        import shutil

        shutil.rmtree(partial, ignore_errors=True)
    return target


_SI = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_IEC = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def human_readable_int(value: str) -> int:
    """The engine's size parser, as its tests pin it: ``1k`` = 1000, ``1Ki`` = 1024, ``1.5G`` = 1.5e9, a
    plain integer as it is; a decimal with an IEC suffix, or anything else, is refused (ValueError)."""
    import re
    from decimal import Decimal

    text = value.strip()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)", text)
    if match is None:
        return int(text)
    number, suffix = match.groups()
    if suffix in _IEC:
        if "." in number:
            raise ValueError(f"no decimals with an IEC suffix: {value!r}")
        return int(number) * _IEC[suffix]
    return int(Decimal(number) * _SI[suffix])


def load_engine_storage(path: Path | None = None) -> ModuleType:
    """The engine's ``sglang.srt.mem_cache.hicache_storage``, with its backend factory and file evictor,
    executed as the wheel has them and registered under the engine's own dotted names in ``sys.modules``
    until ``unload_engine_storage()`` (``HiCacheFile`` imports its evictor by that name; the factory checks
    ``issubclass`` against the real ``HiCacheStorage``).  Needs torch (ImportError naming it);
    ``WheelUnavailable`` without a wheel.  Loading twice returns the modules already loaded."""
    loaded = sys.modules.get("sglang.srt.mem_cache.hicache_storage")
    if loaded is not None and getattr(sys.modules.get("sglang"), "__hicache_stand_in__", False):
        return loaded
    import importlib

    import torch  # noqa: F401  (the engine's module needs it: fail here, naming it)

    source = _source_dir(wheel() if path is None else path)
    for name in _PACKAGES:
        package = ModuleType(name)
        package.__path__ = [str(source.joinpath(*name.split(".")))]
        package.__hicache_stand_in__ = True  # type: ignore[attr-defined]
        sys.modules[name] = package
    utils = ModuleType("sglang.srt.utils")
    utils.__path__ = []
    common = ModuleType("sglang.srt.utils.common")
    common.human_readable_int = human_readable_int  # type: ignore[attr-defined]
    utils.common = common  # type: ignore[attr-defined]
    sys.modules["sglang.srt.utils"] = utils
    sys.modules["sglang.srt.utils.common"] = common
    try:
        for name in STORAGE_MODULES:
            importlib.import_module(name)
    except BaseException:
        unload_engine_storage()
        raise
    return sys.modules["sglang.srt.mem_cache.hicache_storage"]


def unload_engine_storage() -> None:
    """Forget every ``sglang`` module ``load_engine_storage`` registered."""
    for name in [n for n in sys.modules if n == "sglang" or n.startswith("sglang.")]:
        del sys.modules[name]
