"""Linearizability checking (M7, C5): record real-thread histories, search for a sequential witness.

* :mod:`spec.linearizability.checker`: the recorder and the Wing & Gong / Lowe search;
* :mod:`spec.linearizability.metadata_cache`: MetadataCache's sequential spec, workloads and a
  deliberately racy variant the checker must reject.

``python -m spec.linearizability [--histories N]`` runs the real-thread batches and prints their figures.
"""

from spec.linearizability.checker import (
    HistoryRecorder,
    Operation,
    SequentialSpec,
    Verdict,
    check_history,
    run_threads,
)

__all__ = ["HistoryRecorder", "Operation", "SequentialSpec", "Verdict", "check_history", "run_threads"]
