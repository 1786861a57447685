"""The docstring examples of the public modules run as tests."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import hicache
import spec
import spec.conformance
import spec.models
import spec.world

# Each package's modules, one level down: production, and spec's layers of small modules (the models,
# the world, the conformance machinery); the checkers' packages contribute their __init__ alone.
MODULES = sorted(
    {
        name
        for package in (hicache, spec, spec.models, spec.world, spec.conformance)
        for name in [package.__name__]
        + [f"{package.__name__}.{m.name}" for m in pkgutil.iter_modules(package.__path__)]
        if name not in {"spec.conformance.pytest_plugin", "spec.conformance.verify"}
    }
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
