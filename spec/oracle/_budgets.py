"""The default budgets of the oracle's modes that ``--help`` prints: here, apart from the modes
themselves, so that ``--help`` works without Hypothesis (the modes import it)."""

from __future__ import annotations

__all__ = ["DEFAULT_MAX_STEPS", "HISTORIES"]

# --trace: search steps per part of the trace (a key, a pool, or the whole trace) before UNKNOWN (O7).
DEFAULT_MAX_STEPS = 100_000
# --threads: histories per run (O6).
HISTORIES = 1000
