"""The oracle's one error type."""

from __future__ import annotations

__all__ = ["OracleUsageError", "one_line"]


class OracleUsageError(Exception):
    """The oracle cannot run: unknown component, target not importable, interface not mappable (exit 2)."""


def one_line(error: BaseException) -> str:
    """``Type: message`` on one line (a SyntaxError's message, say, may span several)."""
    return " ".join(f"{type(error).__name__}: {error}".split())
