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

__all__ = ["MODULE_NAME", "WheelUnavailable", "cache_dir", "load_engine_evictor", "unload", "wheel"]

MODULE_NAME = "hicache_oracle_engine_lru_file_evictor"  # the engine module, loaded under a name of ours
_STUBS = ("sglang", "sglang.srt", "sglang.srt.environ", "sglang.srt.utils", "sglang.srt.utils.common")


class WheelUnavailable(RuntimeError):
    """The wheel is not cached and cannot be downloaded (the message says why)."""


def cache_dir() -> Path:
    """Where the wheel is kept: ``HICACHE_WHEEL_CACHE``, else ``~/.cache/hicache-oracle/sglang``."""
    return Path(os.environ.get("HICACHE_WHEEL_CACHE", Path.home() / ".cache" / "hicache-oracle" / "sglang"))


def wheel(cache: Path | None = None) -> Path:
    """The cached sglang wheel, downloaded first if there is none (``WheelUnavailable`` when it cannot be)."""
    cache = cache_dir() if cache is None else cache
    found = sorted(cache.glob("sglang-*.whl"))
    if found:
        return found[-1]
    cache.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "sglang", "--no-deps", "-d", str(cache), "-q"]
    try:
        subprocess.run(command, check=True, capture_output=True, text=True, timeout=600)
    except subprocess.CalledProcessError as error:
        tail = " ".join((error.stderr or error.stdout or "").split()[-30:])
        raise WheelUnavailable(
            f"cannot download the sglang wheel from the package registry: {tail}"
        ) from None
    except (OSError, subprocess.TimeoutExpired) as error:
        raise WheelUnavailable(f"cannot run pip download sglang: {error}") from None
    found = sorted(cache.glob("sglang-*.whl"))
    if not found:
        raise WheelUnavailable(f"pip download sglang left no wheel in {cache}")
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
