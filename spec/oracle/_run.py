"""The oracle's one path over a target: ``check()`` (sequential) and ``check_threads()`` (``--threads``).

A run has three phases, each a function of its own: preparation (``_prepared.prepared``: the component,
the target behind its adapter, the declared choices, the groups left out, the time and filesystem
interposed), a search (the mode: ``_sequential.search_sequential`` or ``_threads.search_threads``, siblings
over the same :class:`Prepared`, each returning a ``_result.Found`` and checking what the target read,
O4), and the result (``_result.build_result``, the one maker of a report, a trace's too).  This module is
also the one place that decides what a threads failure whose calls diverge one at a time is (O6): the
class's own clause, which the sequential search is asked for.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..linearizability.checker import MAX_STEPS
from ..machines._base import LockstepMachine
from . import _threads
from ._adapter import Adapter
from ._budgets import HISTORIES
from ._errors import OracleUsageError
from ._prepared import Prepared, load_target, prepare, prepared
from ._result import OracleResult, build_result, subject_of
from ._sequential import SearchBudget, machine_class, search_sequential
from ._threads import ThreadsBudget, search_threads
from ._timeout import CALL_TIMEOUT
from ._worlds import worlds

__all__ = [
    "OracleResult",
    "OracleUsageError",
    "Prepared",
    "check",
    "check_threads",
    "load_target",
    "machine_for",
    "prepared",
]


def machine_for(
    component: str,
    target: str | Callable[..., Any],
    *,
    adapter: Adapter | Mapping[str, Any] | None = None,
    declare: Mapping[str, str] | None = None,
    settings: Mapping[str, Any] | None = None,
) -> type[LockstepMachine]:
    """The machine class the oracle runs for ``target``: the component's own machine over the adapted
    target, following the declared choices.  Reproduction files of the file components drive it step
    by step.  ``settings``: the configuration the run pinned (``--settings``)."""
    spec_component, session, _path = prepare(component, target, adapter, declare, settings=settings)
    return machine_class(spec_component, session)


def check(
    component: str,
    target: str | Callable[..., Any],
    *,
    seed: int = 0,
    max_examples: int = 500,  # the CLI's default too
    steps: int = 40,
    seconds: float | None = None,
    adapter: Adapter | Mapping[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
    run_clock: Callable[[], float] = time.perf_counter,
    leave_out: Sequence[str] = (),
    every_clause: bool = True,
    declare: Mapping[str, str] | None = None,
    call_timeout: float = CALL_TIMEOUT,
    settings: Mapping[str, Any] | None = None,
) -> OracleResult:
    """Check ``target`` against the spec of ``component`` with the project's own lock-step machine.

    ``target`` is an import path (``package.module:Class``) or the class/factory
    itself, called like the spec's constructor (through ``adapter``).  Runs at
    most ``max_examples`` examples of at most ``steps`` steps, starting no
    example after ``seconds`` (the run ends with the figures so far);
    deterministic for a given ``seed`` and budget.  ``progress`` receives a
    line about once a second after the first few seconds; ``run_clock`` is the
    clock the budget and the progress line read (tests pass a fake one).  The
    targets' log lines up to ERROR (a file store's, the engine's failed writes) are silenced for the run.
    Raises :class:`OracleUsageError` when the run cannot start.  ``leave_out`` sets clause groups aside
    (``--leave-out``); ``every_clause`` (default) goes on after a failure with its group set aside (O2).
    ``declare`` names the target's design choices (O3, ``--declare``: ``{"eviction": "lru"}`` for a
    metadata cache that evicts the least recently used, M6-lru); the spec follows them.
    ``call_timeout`` (``--call-timeout``, O8): a call to the target that does not return within it ends
    the run with a FAIL of the clause of the rule that made the call, naming the call and every thread's
    stack, instead of a hang.  ``settings`` (``--settings``, file-store only) pins the store's
    configuration, e.g. ``{"max_size": 10, "eviction_ratio": 1.0}``; the settings not given take the
    engine's defaults (F9: cap off, metadata cache off); unknown keys are an OracleUsageError.

    >>> from spec.models.metadata_cache import MetadataCacheSpec
    >>> check("metadata-cache", MetadataCacheSpec, max_examples=5, steps=5).verdict
    'PASS'
    """
    budget = SearchBudget(seed, max_examples, steps, seconds, progress, run_clock, every_clause)
    with prepared(
        component,
        target,
        adapter=adapter,
        declare=declare,
        leave_out=leave_out,
        call_timeout=call_timeout,
        settings=settings,
    ) as run:
        found = search_sequential(run, budget)  # its last step checks O4 (_sequential.verify_control)
        return build_result(subject_of(run, found), found, seed)


def check_threads(
    component: str,
    target: str | Callable[..., Any],
    *,
    threads: int = 4,
    seed: int = 0,
    histories: int = HISTORIES,
    max_steps: int = MAX_STEPS,
    call_timeout: float = CALL_TIMEOUT,
    adapter: Any = None,
    declare: Mapping[str, str] | None = None,
    leave_out: Sequence[str] = (),
    shrink_budget: int = 300,
    settings: Mapping[str, Any] | None = None,
    max_examples: int = 500,
) -> OracleResult:
    """``--threads``: ``histories`` histories of ``threads`` real threads on fresh targets, each checked
    linearizable against the spec (O6); an OracleResult (verdict PASS, FAIL or UNKNOWN).  ``settings``
    (file-store): every history runs the store with this configuration pinned (``--settings``).
    ``max_examples``: the budget of the sequential check that runs when the failing history's calls,
    made one at a time, already diverge (its clause is then the class's own, reported instead)."""
    budget = ThreadsBudget(component, threads, seed, histories, max_steps, call_timeout, shrink_budget)
    with prepared(
        component, target, adapter=adapter, declare=declare, leave_out=leave_out, settings=settings
    ) as run:
        found = search_threads(run, budget)
        if not found.alone:
            _threads.verify_control(run, found)
            return build_result(subject_of(run, found), found, seed)
    # O6, decided here alone: calls that diverge one at a time are the class's own failure, not a race.
    # The sequential search names its clause on a target prepared afresh, so that the figures it reports
    # (clock readings, filesystem calls: O4) are its own, not the histories' too; the threads failure,
    # blaming the diverging call's clause, is reported only when that search finds none.
    sequential = check(
        component,
        target,
        seed=seed,
        max_examples=max_examples,
        adapter=adapter,
        declare=declare,
        leave_out=leave_out,
        call_timeout=call_timeout,
        settings=settings,
    )
    if not sequential.passed:
        sequential.figures["threads_histories"] = found.figures["histories"]
        sequential.not_checked[worlds()[component].clause] = (
            "(not blamed: the calls of the failing threads history made one at a time already"
            " diverge, so the class is wrong sequentially: reported above)"
        )
        return sequential
    _threads.verify_control(run, found)
    return build_result(subject_of(run, found), found, seed)
