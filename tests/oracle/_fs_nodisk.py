"""An evictor-shaped class whose module refers to no filesystem (tests/oracle/test_fs_control.py)."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["NoDisk"]


class NoDisk:
    def __init__(
        self,
        directory: str,
        *,
        max_size: int,
        min_free_space: int,
        eviction_ratio: float,
        on_evict: Callable[[str], object],
    ) -> None:
        self.directory = directory

    def reserve(self, key: str, nbytes: int) -> bool:
        return True

    def commit(self, key: str) -> None: ...

    def abort(self, key: str) -> None: ...

    def touch(self, key: str) -> None: ...

    def clear(self) -> None: ...
