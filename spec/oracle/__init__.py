"""The regression oracle: check anyone's optimized variant against the spec.

Point it at a class (or factory) that claims to behave like one of the
project's components; it runs the project's own lock-step machine (the same
one ``make test`` runs) with the target in place of the implementation, and
answers PASS with what it covered, or FAIL with the fewest calls that make the
target and the spec disagree, written out as a runnable pytest file.

Command line::

    python -m spec.oracle metadata-cache mypackage.fast:FastCache [--seed N] [--json]
    hicache-oracle existence-cache mypackage.fast:Beliefs --adapter '{"methods": {"contains": "has"}}'

    python -m spec.oracle metadata-cache mypackage.fast:FastCache --threads 4 [--picture race.svg]

Exit status: 0 PASS, 1 divergence found, 2 usage or import error, 3 UNKNOWN (a search budget ran out).

``--threads N`` (O6, ``check_threads``; ``metadata-cache`` and ``file-store``): N real threads run
generated scripts on fresh targets, held at the oracle's clock, fake filesystem and the target's own
locks by a seeded scheduler (``spec/oracle/_threads.py``), and every history is checked linearizable
against the spec; a FAIL names M7 (M9, C5) with the history per thread and a reproduction that
replays the schedule (``replay_threads``).

The report lists a clause as passed only when it was checked to its budget (O8); the others are in
``not_checked`` with why (M7 in a sequential run, a clause that needs a group set aside, a search that
stopped early).  A call to the target that does not return within ``call_timeout`` seconds
(``--call-timeout``, default 10) is a FAIL with every thread's stack, never a hang.

A recorded history instead of a target (O7; ``metadata-cache``, ``existence-cache``, ``pool-beliefs``)::

    python -m spec.oracle metadata-cache --trace cache.trace.jsonl [--json] [--picture FILE.svg]

judges a hicache-trace/1 file (``hicache.trace.TraceRecorder`` writes one; any language can) by timed
linearizability against the spec; exit 3 is UNKNOWN (the search budget, ``--max-steps``, ran out), and
2 a malformed line.  From Python: ``check_trace(component, path)``.

Python API::

    from . import Adapter, check
    result = check("metadata-cache", "mypackage.fast:FastCache", seed=0, max_examples=300, steps=40)
    if not result.passed:
        print(result.summary())
        Path("test_repro.py").write_text(result.repro)

Components: ``metadata-cache`` (M), ``existence-cache`` (E), ``pool-beliefs`` (P),
``file-evictor`` (V) and ``file-store`` (F, V, C); ``python -m spec.oracle --list``
says which machines are in the tree.  An :class:`Adapter` maps renamed methods
and arguments; a clause group the target does not implement (no ``max_entries``,
no ``__len__``, no ``stats``, no ``snapshot``) is left out and named in the
report.  Time: a target that takes a ``clock`` gets the fake one; otherwise the
oracle patches ``time.monotonic``/``time.time`` as the modules of the target and
of its instance's classes (MRO) see them, for the run, and the report says which;
with no reference to the time in any of them it stops with a usage error.
Filesystem (``file-evictor``, ``file-store``): a target that takes ``fs`` gets the
machine's fake one; otherwise ``os``, ``os.path``, ``shutil`` and ``open``, as those
modules (and what a factory reaches through its closure) see them, are the fake for
the run (``spec/oracle/_fs.py``); a target that never calls it, or reaches the real
disk, is a usage error.  ``file-evictor`` is SEMANTICS V's factory interface.
``seconds`` and the progress line act at the start of every example.

How a failure is explained: Hypothesis shrinks the failing example; the clause is the one the
machine's assertion begins with (``"M3: ..."``).  For M, E and P the proxy in front of the target
records every call, so the counterexample and the reproduction are the calls in the target's own API,
with the spec's answers.  The file components' machines also act on a fake filesystem beside the
target, so there the counterexample is the machine's steps, replayed by :func:`machine_for`.

Determinism: a seed and a budget fix the run in a given process (``hypothesis.seed``).
Hypothesis labels stateful rules by object hashes, so another process layout (the CLI
against pytest, say) may take another search path and find a divergence after
more or fewer examples.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._adapter import Adapter
from ._components import COMPONENTS, available_components
from ._errors import OracleUsageError

if TYPE_CHECKING:
    from ._bad_settings import construct
    from ._run import OracleResult, check, check_threads, load_target, machine_for
    from ._threads import replay_threads
    from ._trace import TraceResult, check_trace

# The runner needs Hypothesis; the tables, the adapter and ``--help``/``--describe`` do not, so it is
# imported on first use (``from spec.oracle import check`` as before); so are --threads and the traces.
_LAZY = {
    **dict.fromkeys(("OracleResult", "check", "check_threads", "load_target", "machine_for"), "_run"),
    "replay_threads": "_threads",
    **dict.fromkeys(("TraceResult", "check_trace"), "_trace"),
    "construct": "_bad_settings",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)  # hicache_spec too
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "COMPONENTS",
    "Adapter",
    "OracleResult",
    "OracleUsageError",
    "TraceResult",
    "available_components",
    "check",
    "check_threads",
    "check_trace",
    "construct",
    "load_target",
    "machine_for",
    "replay_threads",
]
