"""The lock-step machines against each implementation and each deliberately wrong variant."""

from collections.abc import Iterable

import pytest

# A machine run over the spec or model it compares with checks the machine, not an implementation: the
# verify tier's (make verify).  The same machine against production runs in make test.
SELF_CHECK = pytest.mark.slow("the machine run over its own spec or model: a check of the machine itself")
# The machine's search for a wrong variant that a pinned scenario of the same machine exposes in make test:
# make test shows the machine's checks catch it; make verify, that the search finds it.
SEARCH_FOR_PINNED = pytest.mark.slow(
    "the machine's search for a variant its pinned scenario exposes in make test; the search: make verify"
)


def implementations(names: Iterable[str]) -> list[object]:
    """A parametrization over ``names``: those naming the spec (``spec``, ``spec lru``) are ``SELF_CHECK``."""
    return [pytest.param(n, marks=SELF_CHECK) if n.startswith("spec") else n for n in names]
