"""The components the model checker knows, each with its CI-sized domain and its deeper one.

A component whose production module has not landed yet is listed as not
available (never silently skipped): the report says so.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from spec.modelcheck.explorer import Configuration

__all__ = ["MODEL_CHECKED", "Component", "available"]


@dataclass(frozen=True)
class Component:
    """A component: its name, the clauses its check covers, and how to build its domains."""

    name: str
    clauses: tuple[str, ...]
    module: str  # spec.modelcheck.<module>, importing the production code it checks
    default_depth: int  # CI-sized bound: reaches the fixpoint of the CI domain where that is cheap
    schedules: bool = False  # an interleaving exploration (module.results()), not a state-space search

    def configurations(self, wide: bool) -> list[Configuration]:
        """The domain: CI-sized, or ``wide`` (more keys, finer clock) for deeper runs."""
        module = importlib.import_module(f"spec.modelcheck.{self.module}")
        build: Callable[[bool], list[Configuration]] = module.domain
        return build(wide)


MODEL_CHECKED: dict[str, Component] = {
    c.name: c
    for c in (
        Component(
            "metadata_cache", ("M2", "M3", "M4", "M5", "M6", "M6-lru", "M8", "M9"), "metadata_cache", 10
        ),
        Component("existence_cache", ("E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8"), "existence_cache", 8),
        Component("pool_beliefs", ("P1", "P2", "P3", "P4", "P5"), "pool_beliefs", 12),
        Component(
            "file_store",
            ("F3", "F4", "F5", "F6", "F7", "F8", "V3", "V4", "V5", "V6", "C3", "B2"),
            "file_store",
            4,
        ),
        Component("c1_race", ("C1",), "c1_race", 0, schedules=True),
    )
}


def available(component: Component) -> str | None:
    """None when the component can be checked, else why not (its module has not landed)."""
    try:
        importlib.import_module(f"spec.modelcheck.{component.module}")
    except ModuleNotFoundError as exc:
        return f"not available: {exc.name} is missing"
    return None
