"""Linearizability checking (M7, C5): record real-thread histories, search for a sequential witness.

* :mod:`spec.linearizability.checker`: the Wing & Gong / Lowe search (timed, pending calls, raised answers);
* :mod:`spec.linearizability.recording`: the recorder of real-thread calls and the rendezvous that
  makes them overlap;
* :mod:`spec.linearizability.timed`: the metadata cache as a timed spec on a real clock (O7), its
  instants kept as a zone of difference constraints (``--trace`` judges with it);
* :mod:`spec.linearizability.metadata_cache`: MetadataCache's sequential spec, workloads and a
  deliberately racy variant the checker must reject.

``python -m spec.linearizability [--histories N]`` runs the real-thread batches and prints their figures.
"""

from .checker import PENDING, Operation, Raised, SequentialSpec, Verdict, check_history
from .recording import HistoryRecorder, run_threads

__all__ = [
    "PENDING",
    "HistoryRecorder",
    "Operation",
    "Raised",
    "SequentialSpec",
    "Verdict",
    "check_history",
    "run_threads",
]
