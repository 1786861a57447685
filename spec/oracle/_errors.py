"""The oracle's one error type."""

from __future__ import annotations

__all__ = ["OracleUsageError"]


class OracleUsageError(Exception):
    """The oracle cannot run: unknown component, target not importable, interface not mappable (exit 2)."""
