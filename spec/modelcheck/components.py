"""The components the model checker knows: the clauses each check covers, its CI-sized depth bound, its
module ``spec.modelcheck.<name>`` (its domains, CI-sized and wide)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from .explorer import Configuration

__all__ = ["MODEL_CHECKED", "ModelCheckedComponent"]


@dataclass(frozen=True)
class ModelCheckedComponent:
    """A component: its name, the clauses its check covers, and how to build its domains."""

    name: str  # and its module, spec.modelcheck.<name>, importing the production code it checks
    clauses: tuple[str, ...]
    default_depth: int  # CI-sized bound: reaches the fixpoint of the CI domain where that is cheap
    schedules: bool = False  # an interleaving exploration (module.results()), not a state-space search

    @property
    def module(self) -> Any:
        return importlib.import_module(f".{self.name}", __package__)

    def configurations(self, wide: bool) -> list[Configuration]:
        """The domain: CI-sized, or ``wide`` (more keys, finer clock) for deeper runs."""
        domain: list[Configuration] = self.module.domain(wide)
        return domain


MODEL_CHECKED: dict[str, ModelCheckedComponent] = {
    c.name: c
    for c in (
        ModelCheckedComponent("metadata_cache", ("M2", "M3", "M4", "M5", "M6", "M6-lru", "M8", "M9"), 10),
        ModelCheckedComponent("existence_cache", ("E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8"), 8),
        ModelCheckedComponent("pool_beliefs", ("P1", "P2", "P3", "P4", "P5"), 12),
        ModelCheckedComponent(
            "file_store", ("F3", "F4", "F5", "F6", "F7", "F8", "V3", "V4", "V5", "V6", "C3", "B2"), 4
        ),
        ModelCheckedComponent("c1_race", ("C1",), 0, schedules=True),
    )
}
