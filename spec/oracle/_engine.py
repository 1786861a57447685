"""O12: the engine's form of a file store, put behind the file-store component's interface.

A target whose constructor takes ``(storage_config, file_path)`` (the engine's stores) or
``(storage_config, kwargs)`` (what the engine's factory calls for a ``dynamic`` backend), or that the
adapter declares ``{"form": "engine"}``, is run through :func:`shim`: a class with the component's
constructor ``(storage_dir, namespace, extra_config)`` and methods, which

* builds the target's own module's ``HiCacheStorageConfig`` (tp 0/1, pp 0/1, attn_cp 0/1, not MLA), the
  namespace ``_<model>_0_1`` giving the model name (so the engine's page names,
  ``<key>_<model>_<tp_rank>_<tp_size>.bin``, are the spec's ``<key><namespace>.bin``), the settings under
  the engine's ``extra_config`` keys and the directory as ``file_path`` (or in ``kwargs``) and as
  ``extra_config["file_storage_path"]``, with the engine's ``SGLANG_HICACHE_FILE_BACKEND_*`` variables
  cleared while it is built;
* gives the engine a fresh private real directory for the example's fake one (``FakeOS.real_dir``): the
  engine writes its pages with numpy's C code, which no stand-in reaches; the stand-ins of ``os`` and
  ``open`` map that directory to the fake one and take such a file in at their next call that names it;
* passes values as ``uint8`` tensors, and to ``get``/``batch_get`` target tensors of the size stored
  (read from the world, not through the target's filesystem: no call of the target's is added); the
  spec's ``get_into`` is the engine's ``get`` with a target of the buffer's size;
* passes a key with ``%`` or ``_`` escaped as the spec's names escape it (the engine's own keys are hex
  hashes): the engine's suffix would make ``e_x`` another name than the spec's ``e%5Fx``;
* has no ``delete``: the engine's interface lacks it (left out and listed, O8).

Torch is imported here only, and only for this form (OracleUsageError naming it when it is missing).
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ._errors import OracleUsageError
from ._fs import FakeOS, held_objects

__all__ = [
    "ENGINE_FOREIGN",
    "ENGINE_NAMESPACE",
    "ENGINE_SETTINGS",
    "engine_form",
    "shim",
    "torch_module",
    "untried_settings",
]

ENGINE_NAMESPACE = "_ns_0_1"  # model "ns", tp_rank 0 of tp_size 1
ENGINE_FOREIGN = "_x_0_1"  # F1: another engine namespace, model "x"
ENGINE_SETTINGS = ("max_size", "eviction_ratio", "min_free_space", "enable_metadata_cache", "metadata_ttl")
ENV_PREFIX = "SGLANG_HICACHE_FILE_BACKEND_"
SIGNATURES = (("storage_config", "file_path"), ("storage_config", "kwargs"))
LACKS = {"delete": "F7 delete: the engine's HiCacheStorage interface has no delete() (O12)"}


def torch_module() -> Any:
    """Torch, imported for the engine form only; OracleUsageError (exit 2) naming it when missing."""
    try:
        import torch
    except ImportError as error:
        raise OracleUsageError(
            f"the engine form (O12) passes values as torch uint8 tensors, and torch cannot be imported "
            f"({error}); install torch in this environment (pip install torch)"
        ) from None
    return torch


def _parameters(target: Callable[..., Any]) -> tuple[str, ...]:
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return ()
    return tuple(signature.parameters)[:2]


def engine_form(target: Callable[..., Any]) -> bool:
    """O12: the constructor takes ``(storage_config, file_path)`` or ``(storage_config, kwargs)``."""
    return _parameters(target) in SIGNATURES


@dataclass
class _Config:
    """The engine's ``HiCacheStorageConfig`` fields, for a target whose module has none."""

    tp_rank: int
    tp_size: int
    pp_rank: int
    pp_size: int
    attn_cp_rank: int
    attn_cp_size: int
    is_mla_model: bool
    enable_storage_metrics: bool
    is_page_first_layout: bool
    model_name: str | None
    tp_lcm_size: int | None = None
    should_split_heads: bool = False
    dp_rank: int = 0
    extra_config: dict[str, Any] | None = None
    dcp_size: int = 1
    dcp_rank: int = 0
    logical_page_size: int | None = None

    @property
    def is_storage_writer(self) -> bool:
        return not self.is_mla_model or self.tp_rank == self.dcp_rank


def escape(key: Any) -> Any:
    """A key as the spec's file names escape it (``%`` then ``_``); anything else as it is."""
    return key.replace("%", "%25").replace("_", "%5F") if isinstance(key, str) else key


def _model(namespace: Any) -> Any:
    """The model name of an engine namespace ``_<model>_0_1`` ("" for the probe's ``""``)."""
    if isinstance(namespace, str) and namespace.endswith("_0_1") and namespace.startswith("_"):
        return namespace[1 : -len("_0_1")]
    return namespace


def shim(target: Callable[..., Any]) -> type:
    """The file-store component's interface over the engine-form ``target`` (O12)."""
    torch = torch_module()
    module = sys.modules.get(getattr(target, "__module__", ""), None)
    config_class = getattr(module, "HiCacheStorageConfig", None) or _Config
    kwargs_form = _parameters(target) == SIGNATURES[1]
    fake_os = FakeOS()

    def tensor(value: Any) -> Any:
        if isinstance(value, (bytes, bytearray, memoryview)):
            return (
                torch.frombuffer(bytearray(value), dtype=torch.uint8)
                if len(value)
                else torch.empty(0, dtype=torch.uint8)
            )
        return value  # B1: what is no bytes-like goes to the engine as it is, for its own answer

    class EngineForm:
        __oracle_reaches__: tuple[type, ...] = (target,) if isinstance(target, type) else ()
        _oracle_fake_os = fake_os

        def __init__(self, storage_dir: str, namespace: str = "", extra_config: Any = None) -> None:
            self._fake_dir, self._namespace = storage_dir, namespace
            real = fake_os.real_dir(storage_dir)
            extra: Any = extra_config
            if extra_config is None or isinstance(extra_config, Mapping):
                # every setting: the engine's own, the reference's (_OURS: the engine ignores them, the
                # reference store takes them: the machine's temp_max_age), any other for the engine's answer
                extra = dict(extra_config or {})
                extra["file_storage_path"] = real
            config = config_class(
                tp_rank=0,
                tp_size=1,
                pp_rank=0,
                pp_size=1,
                attn_cp_rank=0,
                attn_cp_size=1,
                is_mla_model=False,
                enable_storage_metrics=False,
                is_page_first_layout=False,
                model_name=_model(namespace),
                extra_config=extra,
            )
            saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith(ENV_PREFIX)}
            try:
                self._engine = target(config, {"file_path": real} if kwargs_form else real)
            finally:
                os.environ.update(saved)
            held = [type(v) for v in held_objects([self._engine]) if _foreign(type(v))]  # its port too
            self.__oracle_reaches__ = (type(self._engine), *held)

        def _size(self, key: Any) -> int:
            """The size of the file stored under ``key`` in the world (1 where there is none)."""
            fs = fake_os.fs
            suffix = getattr(self._engine, "config_suffix", self._namespace)  # the engine's, by construction
            if fs is None or not isinstance(key, str):
                return 1
            node = fs.files.get(os.path.normpath(f"{self._fake_dir}/{escape(key)}{suffix}.bin"))
            return len(node.data) if node is not None else 1

        def set(self, key: Any, value: Any) -> Any:
            return self._engine.set(escape(key), tensor(value))

        def batch_set(self, keys: Any, values: Any) -> Any:
            try:
                pairs = [(escape(k), tensor(v)) for k, v in zip(keys, values, strict=False)]
            except TypeError:
                return self._engine.batch_set(keys, values)  # B1: not iterable, the engine's answer
            return self._engine.batch_set([k for k, _ in pairs], [v for _, v in pairs])

        def get(self, key: Any) -> Any:
            got = self._engine.get(escape(key), torch.empty(self._size(key), dtype=torch.uint8))
            return None if got is None else got.numpy().tobytes()

        def get_into(self, key: Any, buffer: Any) -> Any:
            try:
                view = memoryview(buffer)
                if view.readonly or not view.c_contiguous:
                    raise TypeError
            except TypeError:
                return self._engine.get(escape(key), buffer)  # B1: the engine's answer to a bad buffer
            got = self._engine.get(escape(key), torch.empty(view.nbytes, dtype=torch.uint8))
            if got is None:
                return False
            view.cast("B")[:] = got.numpy().tobytes()
            return True

        def batch_get(self, keys: Any) -> Any:
            try:
                batch = list(keys)
            except TypeError:
                return self._engine.batch_get(keys, None)  # B1: the engine's answer
            targets = [torch.empty(self._size(k), dtype=torch.uint8) for k in batch]
            got = self._engine.batch_get([escape(k) for k in batch], targets)
            return [None if g is None else g.numpy().tobytes() for g in got]

        def exists(self, key: Any) -> Any:
            return self._engine.exists(escape(key))

        def batch_exists(self, keys: Any) -> Any:
            try:
                batch = [escape(k) for k in keys]
            except TypeError:
                return self._engine.batch_exists(keys)
            return self._engine.batch_exists(batch)

        def clear(self) -> Any:
            return self._engine.clear()

    name = getattr(target, "__qualname__", "target")
    EngineForm.__qualname__ = EngineForm.__name__ = f"EngineForm[{name}]"
    return EngineForm


_OURS = frozenset(
    {"temp_max_age", "layout", "startup_scan", "metadata_eviction", "max_value_size", "shared_group"}
)


def untried_settings(extra_config: Any) -> list[str]:
    """The keys of ``extra_config`` that are the reference's own settings, not the engine's (O12): the
    engine ignores them, so a bad value of one tells nothing of B1 and is not tried (O8)."""
    return sorted(k for k in extra_config if k in _OURS) if isinstance(extra_config, Mapping) else []


def _foreign(cls: type) -> bool:
    """A class of the target's own (not the standard library's, not torch's)."""
    root = getattr(cls, "__module__", "").partition(".")[0]
    return root not in sys.stdlib_module_names and root not in ("builtins", "torch", "numpy")
