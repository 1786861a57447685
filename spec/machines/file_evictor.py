"""Lock-step machine for a file evictor on its own (V1-V6, S7, C3, B1) against ``spec.models.file_store``.

The store's machine only ever sees the evictor between operations, when no
write is in flight.  This one drives the evictor's own API with writes held in
flight across steps (reserve now, publish and commit or abort later), so V5
(never evict a write in flight) and V4 are exercised with interleavings.

The interface is docs/SEMANTICS.md V's, not this project's evictor API: a subclass's
``target`` is called as ``target(directory, max_size=..., min_free_space=...,
eviction_ratio=..., on_evict=..., fs=...)`` and answers an object with
``reserve(key, nbytes) -> bool``, ``commit(key)``, ``abort(key)``,
``touch(key)`` and ``clear()``; files are ``<key>.bin`` in ``directory``.
``fs`` is the machine's fake filesystem, for a factory that takes one (the
oracle passes it on when the target takes ``fs``, and otherwise interposes it as
the target's ``os``, ``open`` and ``shutil``: spec/oracle/_fs.py).  Used when
present: ``discard(key)``, ``evict()``, ``snapshot()`` (``(key, size,
in_flight)`` least recently used first), ``total`` and ``check_invariants()``.
The project's :class:`~hicache.file_evictor.LRUFileEvictor` (and its subclasses)
takes ``fs`` and ``path_of`` itself: :func:`project_factory` puts it behind that
factory.

Checked every step: the answers of ``reserve`` (and ``discard``/``evict``), the
``on_evict`` calls so far against the model's victims (V6: once per victim tried,
in order, never for abort or clear), and the directory against the model's;
inside every ``on_evict(key)`` the victim's file must still be on disk (V6: the
callback comes before the unlink); with eviction on, ``snapshot()`` and ``total``
against the model's entries (C3) when the target has them (an inert evictor need
not track, V1).  Where V leaves the choice open the target declares it (O3, ``choices``):
``commit`` ``mru`` (the committed key becomes the most recently used, the
default) or ``stays`` (it keeps the place its reservation gave it); ``clear``
``keeps-in-flight`` (the default) or ``forgets-all``; ``own`` ``excluded`` (a
reservation leaves the key's own earlier entry out of the limits and out of the
victims, the default) or ``counted`` (V3's ``total + n`` read literally: it counts,
and may be evicted); ``writers`` ``counted`` (two writes of one key in flight stay
in flight until both end, the default) or ``one`` (the first commit ends them); ``eviction`` ``inline``
(V3: a reservation evicts, the default) or ``background`` (V3-bg: a reservation never evicts, and
``evict()``, required then, is one pass of the background evictor, run as a step: the ``evict`` rule,
and after the writes that put the next victim in a plight, so that the pass meets it).  Under
``background`` a difference in a pass's victims or answer is V3-bg's, and after every pass the model's
own promise is checked too: it drained to the low watermark (or ran out of candidates), and the total
stays within what the last pass left plus the bytes admitted since.  The oracle sets V5, V6 and
S7 aside after their failure (O2): without S7 the model retries an unremovable
file on every pass, as V5 alone allows.
"""

from __future__ import annotations

import errno
import posixpath
from collections.abc import Callable, Hashable
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from ._base import BadInput, BadSetting, FileWorldMachine, try_bad_inputs

__all__ = ["BAD_INPUTS", "BAD_SETTINGS", "FileEvictorMachine", "project_factory"]

DIRECTORY = "/d"
KEYS = ("a", "b", "c", "d")
FOREIGN = "someone-else.dat"

keys = st.sampled_from(KEYS)
sizes = st.integers(0, 9)

# B1: every bad input V's clauses name: a reservation's bytes of the wrong type, non-finite or negative
# (V3); which error each is, and the parameter its message names, the spec says (``refuse_bad_size``).
_NAN, _INF = float("nan"), float("inf")
BAD_INPUTS: tuple[BadInput, ...] = tuple(
    BadInput(f"reserve nbytes={value!r}", "reserve", ("a", value))
    for value in (-1, True, 1.5, _NAN, _INF, "1", None)
)
# B1 of the constructor (V1), tried by the oracle through the target's factory: limits of the wrong
# type, negative or above 2**63 - 1 bytes; a ratio outside (0, 1] or no number; a callback that cannot
# be called (the spec's ``refuse_bad_limits`` says which error each is).
BAD_SETTINGS: tuple[BadSetting, ...] = (
    *(
        BadSetting(f"{name}={value!r}", {name: value})
        for name in ("max_size", "min_free_space")
        for value in (-1, 2**63, True, 1.5, "10", None)
    ),
    *(
        BadSetting(f"eviction_ratio={value!r}", {"eviction_ratio": value})
        for value in (0, -0.5, 1.5, _NAN, _INF, "0.9", True, None)
    ),
    BadSetting("on_evict=5 (not callable)", {"on_evict": 5}),
)


def path_of(key: str) -> str:
    return f"{DIRECTORY}/{key}.bin"


def project_factory(target: Callable[..., Any]) -> Callable[..., Any]:
    """``target`` behind SEMANTICS V's factory when it is the project's ``LRUFileEvictor`` or a subclass (it
    takes the filesystem port and ``path_of`` itself: ``<key>.bin`` in ``directory``); else ``target``."""
    from hicache.file_evictor import LRUFileEvictor

    if not (isinstance(target, type) and issubclass(target, LRUFileEvictor)):
        return target
    cls = target

    def factory(
        directory: str,
        *,
        max_size: int,
        min_free_space: int,
        eviction_ratio: float,
        on_evict: Callable[[str], object],
        fs: Any,
    ) -> Any:
        return cls(
            fs,
            lambda key: posixpath.join(directory, f"{key}.bin"),
            directory=directory,
            max_size=max_size,
            min_free_space=min_free_space,
            eviction_ratio=eviction_ratio,
            on_evict=on_evict,
        )

    factory.__module__, factory.__qualname__ = cls.__module__, cls.__qualname__
    return factory


class FileEvictorMachine(FileWorldMachine):
    """Checks ``target``'s evictors against the model, under the declared choices."""

    choices: ClassVar = {
        "commit": "mru",
        "clear": "keeps-in-flight",
        "own": "excluded",
        "writers": "counted",
        "eviction": "inline",
    }

    def __init__(self) -> None:
        super().__init__(0.0)
        self.fs.mkdir(DIRECTORY)
        self.callbacks: list[str] = []
        self.late_callbacks: list[str] = []  # V6: on_evict calls that came after the victim's unlink
        self.gone_victims: set[str] = set()  # victims of this step whose files had vanished (V5)
        self.flying: set[str] = set()  # the keys in flight when the evicting step began
        self.unlinked: list[str] = []  # the paths the target tried to unlink in the step under way
        self.looked: set[str] = set()  # the paths of every filesystem call of the step under way
        self.fs.before = self._before
        self.clause = "V2"  # the clause of the step under way: what a difference found after it breaks
        self.bad_inputs_tried = False  # B1: the bad inputs are tried once an example

    def _before(self, op: str, path: str) -> None:
        self.looked.add(path)
        if op == "unlink":
            self.unlinked.append(path)

    def on_evict(self, key: str) -> None:
        """The callback the evictor is given: V6, checked in full: the victim's file is still on disk
        (unless it was gone before the step began: another process removed it)."""
        self.callbacks.append(key)
        if self.ready and self.model.name(key) in self.model.files and path_of(key) not in self.fs.files:
            self.late_callbacks.append(key)

    @initialize(
        cap=st.sampled_from((0, 10, 16)),
        ratio=st.sampled_from((1.0, 0.5)),
        min_free=st.sampled_from((0, 0, 8)),
        disk_size=st.sampled_from((1 << 20, 30)),
    )
    def build(self, cap: int, ratio: float, min_free: int, disk_size: int) -> None:
        self.fs.disk_size = disk_size
        self.impl = project_factory(self.target)(
            DIRECTORY,
            max_size=cap,
            min_free_space=min_free,
            eviction_ratio=ratio,
            on_evict=self.on_evict,
            fs=self.fs,
        )
        self.model = self.new_model(
            DIRECTORY,
            namespace="",
            cap=cap,
            ratio=ratio,
            min_free=min_free,
            disk_size=disk_size,
            metadata=False,
            ttl=-1,
            temp_max_age=0,
            commit_moves=self.choices["commit"] == "mru",
            own_counted=self.choices["own"] == "counted",
            background=self.background,
        )
        self.ready = True

    @property
    def background(self) -> bool:
        """V3-bg declared: the writes do not evict, the passes (``evict``) do."""
        return self.choices["eviction"] == "background"

    @property
    def v3(self) -> str:
        """The clause of eviction's victims and answers: V3, or V3-bg when declared."""
        return "V3-bg" if self.background else "V3"

    @property
    def enabled(self) -> bool:
        return self.model.cap > 0 or self.model.min_free > 0

    def _gone(self) -> set[str]:
        """Tracked keys whose files vanished behind the evictor's back (V5: they count as evicted)."""
        return {e[0] for e in self.model.lru if not e[2] and self.model.name(e[0]) not in self.model.files}

    def _evicting(self, call: Callable[[], Any], model_call: Callable[[], Any], text: str) -> None:
        """One call that may evict, on the target then on the model: its answer, V6 in the callback."""
        gone = self._gone()
        self.flying = {e[0] for e in self.model.lru if e[2]}
        if "S7" in self.set_aside:
            self.model.resting.clear()  # S7 set aside: the model retries unremovable files (V5 alone)
        before = len(self.callbacks)
        self.unlinked, self.looked = [], set()
        got = call()
        if self.late_callbacks and "V6" not in self.set_aside:
            late, self.late_callbacks = self.late_callbacks, []
            raise AssertionError(f"V6: on_evict({late[0]!r}) called after its file was unlinked ({text})")
        self.late_callbacks = []
        tried_before = len(self.victims)
        want = model_call()
        self.gone_victims = gone & set(self.victims[tried_before:])
        self._compare_callbacks(gone, before, tried_before)  # the victims first: the more specific
        if got is not None and want is not None and got != want:
            clause = self._eviction_clause(got, gone, self.victims[tried_before:])
            raise AssertionError(f"{clause}: {text} -> {got}, model {want}")

    @rule(key=keys, size=sizes)
    def reserve(self, key: str, size: int) -> None:
        """V3 (V3-bg: no eviction), V5, V6."""
        self.clause = self.v3
        self._evicting(
            lambda: bool(self.impl.reserve(key, size)),
            lambda: self.model.reserve(key, size),
            f"reserve({key!r}, {size})",
        )
        if (
            self.choices["writers"] == "one" and key in self.model.writers
        ):  # a second write in flight is the same one:
            self.model.writers[key] = 1  # one commit ends both

    @rule(key=keys, size=sizes)
    def write(self, key: str, size: int) -> None:
        """What the store does: reserve, and when admitted, write and commit at once."""
        self.reserve(key, size)
        if any(e[0] == key and e[2] for e in self.model.lru):
            self._publish(key, size)

    def _publish(self, key: str, size: int) -> None:
        self.fs.put(path_of(key), b"x" * size)
        self.model.files[self.model.name(key)] = (b"x" * size, self.clock())
        self.impl.commit(key)
        self.model.commit(key)

    @rule(index=st.integers(0, 3))
    def publish(self, index: int) -> None:
        """V4: a write in flight lands on disk and is committed."""
        self.clause = "V4"
        flying = [e for e in self.model.lru if e[2]]
        if not flying:
            return
        key, size, _ = flying[index % len(flying)]
        self._publish(key, size)

    @rule(key=keys)
    def commit(self, key: str) -> None:
        """V4 (also of a key not in flight: a no-op)."""
        self.clause = "V4"
        self.impl.commit(key)
        self.model.commit(key)

    @rule(key=keys)
    def abort(self, key: str) -> None:
        """V4, V6: bytes given back, no callback."""
        self.clause = "V4"
        self.impl.abort(key)
        self.model.abort(key)

    @rule(key=keys)
    def touch(self, key: str) -> None:
        """V4: most recently used; an untracked file on disk is adopted with its real size."""
        self.clause = "V4"
        self.impl.touch(key)
        self.model.touch(key, None)

    @rule(key=keys)
    def discard(self, key: str) -> None:
        """V4 (optional: a target with ``discard``): a file found missing is dropped (F4), a write in
        flight is not."""
        self.clause = "V4"
        got, want = self.impl.discard(key), self.model.discard(key)
        assert got is None or bool(got) == want, f"V4: discard({key!r}) -> {got}, model {want}"

    @rule()
    def evict(self) -> None:
        """V3 with nothing to write (start-up; optional: a target with ``evict``); V3-bg: one pass of the
        background evictor (required then), which drains to the low watermark."""
        self.clause = self.v3
        self._evicting(lambda: self.impl.evict(), self.model.evict, "evict()")
        if self.background:
            model = self.model
            assert model.drained(), f"V3-bg (the model): a pass left {model.lru} over the watermarks"

    def _pass(self) -> None:
        """V3-bg: the background evictor's pass after a write that needed the room (inline: nothing)."""
        if self.background:
            self.evict()

    @rule()
    def clear(self) -> None:
        """V6: no callbacks; writes in flight keep their entries (or not: the declared ``clear``)."""
        self.clause = "V6"
        self.impl.clear()
        if self.choices["clear"] == "forgets-all":
            self.model.forget_all()
        else:
            self.model.forget_committed()

    @rule(index=st.integers(0, 3))
    def another_process_deletes(self, index: int) -> None:
        """V5: a victim already gone counts as evicted."""
        self.clause = "V5"
        present = sorted(n for n in self.model.files if n != FOREIGN)
        if present:
            name = present[index % len(present)]
            self.fs.remove(f"{DIRECTORY}/{name}")
            del self.model.files[name]

    @rule(size=st.integers(0, 20))
    def other_files_take_disk_space(self, size: int) -> None:
        """V3: free space is shared with files the evictor does not own."""
        self.clause = "V3"
        self.fs.put(f"{DIRECTORY}/{FOREIGN}", b"f" * size)
        self.model.files[FOREIGN] = (b"f" * size, self.clock())

    @rule(index=st.integers(0, 3), code=st.sampled_from((errno.EPERM, errno.EBUSY, errno.EIO)))
    def file_becomes_unremovable(self, index: int, code: int) -> None:
        """V5: one of the tracked files (the likely next victims) cannot be removed."""
        self.clause = "V5"
        tracked = [e[0] for e in self.model.lru] or list(KEYS)
        key = tracked[index % len(tracked)]
        self.fs.fail_unlink(path_of(key), code)  # the model reads the same ledger

    def _next_victim(self) -> str | None:
        """The key the next eviction tries first (the least recently used committed entry)."""
        resting = set(self.model.resting)
        victims = [e[0] for e in self.model.lru if not e[2] and e[0] not in resting]
        return victims[0] if victims else None

    def _two_victims(self) -> None:
        """Small writes of untracked keys until two committed entries could be evicted."""
        for key in KEYS:
            resting = set(self.model.resting)
            if sum(not e[2] and e[0] not in resting for e in self.model.lru) >= 2:
                return
            if all(e[0] != key for e in self.model.lru):
                self.write(key, 1)

    @rule(key=keys, code=st.sampled_from((errno.EPERM, errno.EBUSY, errno.EIO)))
    def evict_past_an_unremovable_file(self, key: str, code: int) -> None:
        """V5: the next victim cannot be removed, and a write needs all the room: eviction goes on past
        it to the others."""
        self._two_victims()
        victim = self._next_victim()
        if victim is not None:
            self.fs.fail_unlink(path_of(victim), code)
        self.write(key, self.model.cap or 9)
        self._pass()
        self.clause = "V5"

    @rule(key=keys)
    def evict_a_file_that_vanished(self, key: str) -> None:
        """V5, V6: the next victim's file is gone (another process): it counts as evicted, with its
        callback, and its bytes come back."""
        self._two_victims()
        victim = self._next_victim()
        if victim is not None and self.model.name(victim) in self.model.files:
            self.fs.remove(path_of(victim))
            del self.model.files[self.model.name(victim)]
        self.write(key, self.model.cap or 9)
        self._pass()
        self.clause = "V5"

    @precondition(lambda self: not self.bad_inputs_tried)
    @rule()
    def bad_input(self) -> None:
        """B1: every bad input of ``BAD_INPUTS`` raises the error the model raises for it, naming the
        parameter, and changes nothing (the entries, the callbacks and the directory are compared after
        the step).  The labels tried go to the report."""
        self.clause = "B1"
        self.bad_inputs_tried = True  # once an example: the other rules keep their share of the steps
        if self.skip_bad_inputs:
            return  # shrinking another clause's failure: the same step, without the calls (see _base)
        try_bad_inputs(self._seen, self.impl, BAD_INPUTS, lambda method, *a: getattr(self.model, method)(*a))

    @rule()
    def heal(self) -> None:
        self.clause = "V5"
        self.fs.heal()

    def _snapshot(self) -> list[tuple[Any, ...]] | None:
        """The target's entries, when it has ``snapshot()`` and eviction is on (V1: inert, no tracking
        is promised)."""
        if not self.enabled or not hasattr(self.impl, "snapshot"):
            return None
        return [tuple(e) for e in self.impl.snapshot()]

    def _lost_in_flight(self) -> bool:
        """Whether a write the model has in flight is gone from the evictor (V5)."""
        entries = self._snapshot()
        if entries is None:
            return False
        kept = {e[0] for e in entries if e[2]}
        return any(e[2] and e[0] not in kept for e in self.model.lru)

    def _eviction_clause(self, got: object, gone: set[str], tried: list[str]) -> str:
        """The clause an eviction that differs from the model's breaks: V5 when a write in flight was
        evicted, an unremovable file wedged eviction (a refusal the model does not make), or a file
        already gone was among the model's victims (it counts as evicted); else V3 (V3-bg).  Wedging needs
        the model to have evicted in the step (under V3-bg a write never does)."""
        wedged = got is False and bool(self.fs.faults.unremovable) and bool(tried)
        leaked = got is False and bool(gone & set(tried))  # refused: a vanished victim's bytes kept
        return "V5" if wedged or leaked or self._lost_in_flight() else self.v3

    def _compare_callbacks(self, gone: set[str], before: int | None = None, tried_before: int = 0) -> None:
        """The ``on_evict`` calls against the model's victims.  ``before``/``tried_before``: the calls and
        victims before the evicting step under way; None: a step that evicts nothing (abort, clear, ...),
        where any callback is V6's."""
        if self.callbacks == self.victims:
            return
        done, want = self.callbacks, self.victims
        if before is None or done[:before] != want[:tried_before]:
            self._fail_callbacks("V6")
            return
        now, expected = done[before:], want[tried_before:]
        missing = [k for k in expected if k not in now]
        extra = [k for k in now if k not in expected]
        unremovable = {k for k in KEYS if self.fs.faults.stuck(path_of(k))}
        # Fewer victims than the model, after an unremovable one: eviction stopped at a file it could
        # not remove instead of going on with the next victim (V5).
        untried = expected[len(now) :] if expected[: len(now)] == now else []
        # The last victim it tried: its callback's key (a callback before the unlink), or the last file
        # it tried to unlink (a target that calls back only after a removal that succeeded).
        stuck = bool(self.unlinked) and self.fs.faults.stuck(self.unlinked[-1])
        wedged = bool(untried) and (stuck or (bool(now) and now[-1] in unremovable))
        if wedged or set(extra) & self.flying:
            clause = "V5"  # stopped at an unremovable victim, or evicted a write in flight
        elif any(k in self.model.resting and k not in expected for k in now):
            clause = "S7"  # a victim the model lets rest (its unlink failed a moment ago) tried again
        elif missing and not extra and all(self._tried(k) for k in missing):
            clause = "V6"  # tried (unlinked, or its file is gone) without its callback
        elif extra and gone & set(now):
            clause = "V5"  # more victims after one whose file had vanished: its bytes were not counted
        else:
            clause = self.v3  # other victims than the least recently used (or, V3-bg, any in a write)
        self._fail_callbacks(clause)

    def _tried(self, key: str) -> bool:
        """Whether the target tried to evict ``key`` in this step: it unlinked it, or the file is gone and
        the target looked at it (a stat that found it missing)."""
        path = path_of(key)
        return path in self.unlinked or (path not in self.fs.files and path in self.looked)

    def _fail_callbacks(self, clause: str) -> None:
        """Raise the callbacks' difference as ``clause``'s; with V6 set aside (O2), a V6 difference is
        taken as the model's victims, so later steps are compared from there (as a V3 one, with V3 set
        aside: only eviction's victims are; its answers are still compared)."""
        if clause in self.set_aside:
            if clause != "V6" and not self.absorbed:  # V6's callbacks alone change no state
                self.absorbed = clause
            self.callbacks[:] = self.victims
            return
        raise AssertionError(f"{clause}: on_evict {self.callbacks} != {self.victims}")

    def _compare(self) -> None:
        entries = self._snapshot()
        if entries is not None and entries != self.model.lru:
            clause = "V5" if self._lost_in_flight() else self.clause
            raise AssertionError(f"{clause}: entries {entries} != model {self.model.lru} (V2)")
        if self.enabled and hasattr(self.impl, "total"):
            total = self.impl.total
            want = sum(e[1] for e in self.model.lru)
            assert total == want, f"{'V5' if self.gone_victims else 'C3'}: total {total} != model {want}"
        self.gone_victims = set()
        self._compare_callbacks(set())
        if self.background:
            now, bound = sum(e[1] for e in self.model.lru), self.model.over_cap_bound()
            assert now <= bound, f"V3-bg (the model): total {now} above {bound} (last pass + admitted since)"
        listing = {n: (f.data, f.mtime) for n, f in self.fs.listing(DIRECTORY).items()}
        assert listing == self.model.files, f"{self.clause}: directory {listing} != model {self.model.files}"

    def more_state(self) -> Hashable:
        writers = tuple(sorted(self.model.writers.items()))
        return writers, tuple(sorted(self.model.published)), tuple(sorted(self.fs.faults.unremovable))
