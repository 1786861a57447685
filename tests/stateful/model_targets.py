"""The file store's model as a target of its own machines: a store and an evictor on the fake filesystem.

As the other three models run as the implementation in their machines (the spec must trivially conform:
that checks the machine, not the spec), :class:`ModelStore` and :func:`model_evictor` take the machines'
factories' arguments and keep the model's directory in the fake filesystem itself (:class:`Files`,
:class:`Planted`), reading the faults the filesystem would take from its ledger (as ``"fs"``).  What
the model does not do (temp files, renames) the directory never shows, so the machines see the same
steps.  A query of a name (``in``) is one ``stat`` of the port, as the store's own is (F6, F5 count them).
:class:`ModelStoreMachine` and :class:`ModelEvictorMachine` are the machines with the model as their target;
:class:`BackgroundModelStoreMachine` and :class:`BackgroundModelEvictorMachine` the same with the model
evicting in the background (V3-bg) and the machines told so (``eviction=background``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, MutableMapping
from typing import Any

from spec.machines.file_evictor import FileEvictorMachine
from spec.machines.file_store import BackgroundScanMachine, FileStoreMachine
from spec.models.file_names import Entry, total
from spec.models.file_store import FileStoreModel
from spec.models.refusals import refuse_bad_call
from spec.world.filesystem import FakeFile, FakeFileSystem

__all__ = [
    "BackgroundModelEvictorMachine",
    "BackgroundModelStore",
    "BackgroundModelStoreMachine",
    "BackgroundScanModelStoreMachine",
    "Files",
    "ModelEvictorMachine",
    "ModelStore",
    "ModelStoreMachine",
    "Planted",
    "background_model_evictor",
    "model_evictor",
]


class _Directory:
    def __init__(self, fs: FakeFileSystem, directory: str) -> None:
        self.fs, self.directory = fs, directory

    def _nodes(self) -> dict[str, FakeFile]:
        prefix = self.directory + "/"
        nodes = ((p[len(prefix) :], f) for p, f in self.fs.files.items() if p.startswith(prefix))
        return {n: f for n, f in nodes if "/" not in n and self._ours(f) == self.pages}

    def _ours(self, node: FakeFile) -> bool:
        return node.kind == "file" and node.uid == self.fs.uid

    pages = True

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._nodes()))

    def __len__(self) -> int:
        return len(self._nodes())

    def __delitem__(self, name: str) -> None:
        if not self.fs.remove(f"{self.directory}/{name}"):
            raise KeyError(name)


class Files(_Directory, MutableMapping[str, tuple[bytes, float]]):
    """This user's regular files in ``directory``: name -> (bytes, mtime)."""

    def __getitem__(self, name: str) -> tuple[bytes, float]:
        node = self._nodes()[name]
        return node.data, node.mtime

    def __setitem__(self, name: str, file: tuple[bytes, float]) -> None:
        self.fs.put(f"{self.directory}/{name}", file[0], mtime=file[1])

    def __contains__(self, name: object) -> bool:
        try:
            found = self.fs.stat(f"{self.directory}/{name}")
        except OSError:
            return False
        return found.kind == "file" and found.uid == self.fs.uid


class Planted(_Directory, MutableMapping[str, tuple[str, int]]):
    """S3: the other nodes in ``directory``: name -> (kind, ``other`` for another user's file; bytes)."""

    pages = False

    def __getitem__(self, name: str) -> tuple[str, int]:
        node = self._nodes()[name]
        return "other" if node.kind == "file" else node.kind, len(node.data)

    def __setitem__(self, name: str, node: tuple[str, int]) -> None:
        raise TypeError("the model never plants a node")


def _in(fs: FakeFileSystem, directory: str) -> dict[str, Any]:
    """The model's arguments that put it in ``directory`` of ``fs``: its disk, faults and directory."""
    where: dict[str, Any] = {"disk_size": fs.disk_size, "faults": fs.faults, "directory": directory}
    return where | {"reader": "fs", "files": Files(fs, directory), "planted": Planted(fs, directory)}


class _Beliefs:
    """The model's live beliefs as the store's metadata cache shows them (``snapshot()``)."""

    def __init__(self, model: FileStoreModel) -> None:
        self.model = model

    def snapshot(self) -> list[tuple[Hashable, float]]:
        return [(k, b) for k, b in self.model.beliefs.items() if self.model.believed(str(k))]


class _ModelEvictor:
    """SEMANTICS V's evictor over the model: ``clear`` keeps the writes in flight."""

    def __init__(self, model: FileStoreModel) -> None:
        self.model = model
        self.reserve, self.commit, self.abort = model.reserve, model.commit, model.abort
        self.touch, self.discard, self.evict = model.touch, model.discard, model.evict
        self.clear = model.forget_committed

    def snapshot(self) -> list[Entry]:
        return list(self.model.lru)

    @property
    def total(self) -> int:
        return total(self.model.lru)


class ModelStore(FileStoreModel):
    """The model as ``HiCacheFile(storage_dir, namespace=, extra_config=, fs=, clock=)``; F8-bg: with
    ``startup_scan="background"`` its scan reads ``_scan_batch`` nodes a ``_scan_step`` (no thread)."""

    BACKGROUND = False  # V3-bg: its evictor evicts in the background (``evict()`` is a pass)
    _scan_thread = False  # F8-bg: HiCacheFile's test hook (the model never has a thread)
    _scan_batch = 4096

    def __init__(
        self,
        storage_dir: str,
        *,
        namespace: str = "",
        extra_config: dict[str, Any],
        fs: FakeFileSystem,
        clock: Callable[[], float],
    ) -> None:
        config = extra_config
        super().__init__(
            **_in(fs, storage_dir),
            namespace=namespace,
            cap=config["max_size"],
            ratio=config["eviction_ratio"],
            min_free=config["min_free_space"],
            metadata=config["enable_metadata_cache"],
            ttl=config["metadata_ttl"],
            temp_max_age=config["temp_max_age"],
            clock=clock,
            background=self.BACKGROUND,
            startup_scan=config.get("startup_scan", "blocking"),
            scan_batch=self._scan_batch,
        )
        self.evictor = _ModelEvictor(self)
        self.restart()

    def snapshot(self) -> list[tuple[Hashable, float]]:
        """The live beliefs, as the store's ``snapshot()`` shows them (empty with beliefs off)."""
        return _Beliefs(self).snapshot() if self.metadata else []

    def _scan_step(self) -> bool:
        return self.scan_step()

    def wait_started(self, timeout: float | None = None) -> bool:
        return self.listing.left is None

    def close(self) -> None:
        self.listing.left = None

    def get_into(self, key: str, buffer: bytearray) -> bool:
        refuse_bad_call("get_into", key, buffer, namespace=self.namespace)  # B1 (F2)
        data = self.get(key, buffer_size=len(buffer))
        if data is not None:
            buffer[:] = data
        return data is not None

    def batch_set(self, keys: list[str], values: list[bytes]) -> list[bool]:
        refuse_bad_call("batch_set", keys, values, namespace=self.namespace)  # B1 (F5): all first
        return [self.set(k, v) for k, v in zip(keys, values, strict=True)]

    def batch_get(self, keys: list[str]) -> list[bytes | None]:
        refuse_bad_call("batch_get", keys, namespace=self.namespace)  # B1 (F5): every key first
        return [self.get(k) for k in keys]


def model_evictor(
    directory: str,
    *,
    max_size: int,
    min_free_space: int,
    eviction_ratio: float,
    on_evict: Callable[[str], object],
    fs: FakeFileSystem,
    background: bool = False,
) -> _ModelEvictor:
    """The model as SEMANTICS V's factory (files ``<key>.bin`` in ``directory``); ``background``: V3-bg."""
    limits: dict[str, Any] = {"cap": max_size, "ratio": eviction_ratio, "min_free": min_free_space}
    beliefs: dict[str, Any] = {"metadata": False, "ttl": -1, "temp_max_age": 0}
    world: dict[str, Any] = {"namespace": "", "clock": fs.now, "on_evict": on_evict, "background": background}
    model = FileStoreModel(**_in(fs, directory), **limits, **beliefs, **world)
    return _ModelEvictor(model)


def background_model_evictor(directory: str, **limits: Any) -> _ModelEvictor:
    """The model as SEMANTICS V's factory of a background evictor (V3-bg)."""
    return model_evictor(directory, **limits, background=True)


class BackgroundModelStore(ModelStore):
    BACKGROUND = True


class ModelStoreMachine(FileStoreMachine):
    target = staticmethod(ModelStore)


class ModelEvictorMachine(FileEvictorMachine):
    target = staticmethod(model_evictor)


BackgroundModelStoreMachine = FileStoreMachine.over(BackgroundModelStore, eviction="background")
BackgroundScanModelStoreMachine = BackgroundScanMachine.over(ModelStore)
BackgroundModelEvictorMachine = FileEvictorMachine.over(background_model_evictor, eviction="background")
