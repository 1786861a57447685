"""What every lock-step machine shares: counting examples, steps and distinct states; and what the two
file machines share: the world the store's model lives in (:class:`FileWorldMachine`)."""

from __future__ import annotations

import inspect
import re
import sys
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar, NamedTuple, TypeVar

from hypothesis import settings
from hypothesis.control import current_build_context, currently_in_test_context
from hypothesis.errors import HypothesisException
from hypothesis.stateful import RuleBasedStateMachine, invariant, run_state_machine_as_test

from ..models.file_store import FileStoreModel
from ..world.clock import FakeClock
from ..world.filesystem import FakeFileSystem

__all__ = [
    "BadInput",
    "BadSetting",
    "Figures",
    "FileWorldMachine",
    "LockstepMachine",
    "assert_refused",
    "assert_refused_as",
    "independent_of_loaded_modules",
    "names_any",
    "own_names",
    "parameter_named",
    "refusal",
    "replaying_a_failure",
    "run_machine",
    "try_bad_inputs",
]


M = TypeVar("M", bound="LockstepMachine")


@dataclass
class Figures:
    """What a run of a machine covered."""

    examples: int = 0  # examples that ran a check and that Hypothesis counts (see LockstepMachine.teardown)
    checks: int = 0  # comparisons of implementation and spec: one after init, one per step
    states: set[Hashable] = field(default_factory=set)
    seconds: float = 0.0
    bad_inputs: set[str] = field(default_factory=set)  # B1: the labels of the bad inputs tried

    def as_dict(self) -> dict[str, float]:
        return {
            "examples": self.examples,
            "steps": self.checks - self.examples,
            "distinct_states": len(self.states),
            "seconds": round(self.seconds, 2),
        }


class LockstepMachine(RuleBasedStateMachine):
    """Base of the machines: a machine compares answers in its rules and implements ``abstract_state``
    (a hashable view of the spec state, once built) and ``_compare`` (what ``check_step`` compares after
    every step), or ``check_step`` itself.  It runs as one subclass per implementation, which names the
    implementation's factory, ``target = staticmethod(factory)`` (or ``Machine.over(factory)``), and the
    design choices it declares where the spec leaves one open (O3), ``choices``."""

    figures: Figures = Figures()
    target: Callable[..., Any]  # the implementation's factory (one subclass per implementation)
    choices: ClassVar[Mapping[str, str]] = {}  # O3: the declared choices, each at the machine's default
    impl: Any  # the implementation, built by the machine's @initialize rule with its spec
    # Whether that rule has run: Hypothesis runs it before any other rule, but ``check_step`` and
    # ``abstract_state`` also run before it (after __init__; the oracle's replays call them directly).
    ready = False
    # Clauses whose comparisons a run skips (the oracle sets a clause aside after it failed, O2).
    set_aside: frozenset[str] = frozenset()
    # The first of them whose divergence this example let pass while the implementation's state went
    # its own way (O8): a later difference in the example is its consequence, not another clause's.
    absorbed = ""
    # B1: the ``bad_input`` rule's step makes no call (the oracle, shrinking another clause's failure).
    skip_bad_inputs = False

    def __init__(self) -> None:
        if not hasattr(self, "target"):
            raise TypeError(
                f"{type(self).__name__} checks nothing: subclass it, target = staticmethod(factory)"
            )
        super().__init__()
        self._seen = Figures()  # this example's checks and states: added to ``figures`` at teardown

    @classmethod
    def over(cls: type[M], target: Callable[..., Any], **choices: str) -> type[M]:
        """The subclass of this machine that checks ``target``, following the declared ``choices``.  It
        has the machine's names, so Hypothesis prints and derandomizes it as the machine itself."""
        if unknown := sorted(choices.keys() - cls.choices.keys()):
            raise TypeError(f"{cls.__name__} has no design choice {', '.join(unknown)}")
        names = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
        members = {"target": staticmethod(target), "choices": {**cls.choices, **choices}}
        return type(cls.__name__, (cls,), {**names, **members})

    def abstract_state(self) -> Hashable:
        raise NotImplementedError

    def check_step(self) -> None:
        """Compare implementation and spec: nothing before the @initialize rule; then the
        implementation's own ``check_invariants()``, where it has one, and ``_compare()``."""
        if self.ready:
            if hasattr(self.impl, "check_invariants"):
                self.impl.check_invariants()
            self._compare()

    def _compare(self) -> None:
        raise NotImplementedError

    @invariant()
    def _after_every_step(self) -> None:
        self._seen.checks += 1
        self.check_step()
        self._seen.states.add(self.abstract_state() if self.ready else None)

    def teardown(self) -> None:
        """Count this example if it ran a check and Hypothesis counts it towards ``max_examples``: it
        ended normally or failed, and it is not Hypothesis's replay of a failure it already ran (an
        example Hypothesis rejects or abandons for running out of data ends on a Hypothesis control
        exception: StopTest, UnsatisfiedAssumption)."""
        super().teardown()
        seen = self._seen
        self._seen = Figures()
        in_flight = sys.exc_info()[1]  # teardown runs in Hypothesis's ``finally``: what ends the example
        control = in_flight is not None and (
            isinstance(in_flight, HypothesisException) or not isinstance(in_flight, Exception)
        )
        if seen.checks == 0 or control or replaying_a_failure():
            return
        figures = type(self).figures
        figures.examples += 1
        figures.checks += seen.checks
        figures.states |= seen.states
        figures.bad_inputs |= seen.bad_inputs


# B1: each machine's ``bad_input`` rule tries its list once an example (a precondition: not tried yet).
# While the oracle shrinks a failure of another clause, it sets ``skip_bad_inputs``: the step is taken as
# before (the same draws mean the same rules, so every example replays as it ran) but makes no call, and
# the shrinker's examples cost what they did before B1 (spec/oracle/_sequential.py).


class BadInput(NamedTuple):
    """B1: one bad input to try on a target: ``label`` (what the report lists), the ``method`` called with
    ``args`` after the step's own first arguments (the pool of an existence cache), ``at`` the index of the
    bad argument in the whole call, first arguments included (-1: the last; the target's parameter at
    that position is the one its message may name)."""

    label: str
    method: str
    args: tuple[Any, ...]
    at: int = -1


class BadSetting(NamedTuple):
    """B1: one bad constructor setting to try: ``label`` (what the report lists), and the spec-level
    constructor arguments (``settings``) the oracle passes in place of the ones it builds with."""

    label: str
    settings: Mapping[str, Any]


SpecCall = Callable[..., object]  # spec(method, *args): the same call on the spec, which refuses it (B1)


def refusal(call: Callable[[], object]) -> Exception | None:
    """The exception ``call`` raises (the spec's B1 refusal), or None when it raises nothing."""
    try:
        call()
    except Exception as error:  # the spec's refusal, whatever its type
        return error
    return None


def parameter_named(error: BaseException) -> str:
    """The parameter a spec's refusal names: the first word of its message (B1: each begins with it)."""
    found = re.match(r"\w+", str(error))
    return found[0] if found else ""


def names_any(message: str, names: Iterable[str]) -> bool:
    """Whether ``message`` names one of ``names`` as a word (``key`` is not named by ``keys``)."""
    return any(re.search(rf"\b{re.escape(name)}\b", message) for name in names if name)


def own_names(target: Any, method: str, position: int) -> set[str]:
    """The target's own name for the parameter at ``position`` of ``method``: the oracle's proxy says (its
    adapter may rename it); otherwise the target's signature, where it has one."""
    names_of = getattr(target, "_parameter_names", None)
    if names_of is not None:
        return set(names_of(method, position))
    try:
        parameters = list(inspect.signature(getattr(target, method)).parameters.values())
    except (AttributeError, TypeError, ValueError):  # no signature (a C method): only the spec's name
        return set()
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if position < len(parameters) and parameters[position].kind in positional:
        return {parameters[position].name}
    return set()


def assert_refused_as(
    call: Callable[[], object], want: Exception, label: str, also: Callable[[], set[str]] = set
) -> None:
    """B1: ``call`` raises an exception of ``want``'s type (a TypeError for a wrong type, a ValueError for
    a wrong value) whose message names the parameter: as the spec's message does (its first word), or
    as ``also()`` gives (the target's own names for it, asked only when needed); anything else fails
    naming ``label`` and what happened."""
    error = type(want).__name__
    try:
        call()
    except Exception as other:  # the target's answer, whatever it raised
        if not isinstance(other, type(want)):
            raise AssertionError(
                f"B1: {label} did not raise {error}; it raised {type(other).__name__}: {other}"
            ) from None
        names = {parameter_named(want)}
        if not names_any(str(other), names) and not names_any(str(other), names := names | also()):
            named = " or ".join(sorted(names))
            raise AssertionError(
                f"B1: {label} raised {type(other).__name__} without naming {named}: {other}"
            ) from None
        return
    raise AssertionError(f"B1: {label} did not raise {error}; it raised nothing")


def try_bad_inputs(
    seen: Figures,
    target: Any,
    inputs: Iterable[BadInput],
    spec: SpecCall,
    *first: Any,
    after: Callable[[str], None] | None = None,
) -> None:
    """B1: call each bad input's method of ``target`` (with ``first`` before its arguments); it must raise
    what the spec raises for the same call (``spec(method, *first, *args)``: the spec says which inputs
    are bad and which error each is), with a message naming the parameter (as the spec names it, or as
    the target does).  A method ``target`` lacks (its group left out) is skipped.  The labels tried are
    added to ``seen`` (the report lists them); ``after(label)`` checks what else each must not have done
    (a filesystem call, F2).  Behind the oracle's proxy (``_in_one_call``) they run as one call of its
    call guard (O8: one timeout for them all, a thread handoff for them all rather than one each)."""
    one_call = getattr(target, "_in_one_call", None)
    each = partial(_try_each, seen, target, tuple(inputs), spec, first, after)
    if one_call is not None:
        one_call(each, "the bad inputs of B1")
    else:
        each()


def _try_each(
    seen: Figures,
    target: Any,
    inputs: tuple[BadInput, ...],
    spec: SpecCall,
    first: tuple[Any, ...],
    after: Callable[[str], None] | None,
) -> None:
    for bad in inputs:
        try:
            bound = getattr(target, bad.method)
        except AttributeError:
            continue
        want = refusal(partial(spec, bad.method, *first, *bad.args))
        if want is None:
            raise RuntimeError(f"B1: the spec takes {bad.label}: it is no bad input (the machine's list)")
        seen.bad_inputs.add(bad.label)
        position = bad.at % (len(first) + len(bad.args))
        also = partial(own_names, target, bad.method, position)
        assert_refused_as(partial(bound, *first, *bad.args), want, bad.label, also)
        if after is not None:
            after(bad.label)


def assert_refused(calls: Iterable[Callable[[], object]], message: str) -> None:
    """Every call raises ValueError (bad input, B1); the first that does not fails with ``message``."""
    for call in calls:
        try:
            call()
        except ValueError:
            continue
        raise AssertionError(message)


class FileWorldMachine(LockstepMachine):
    """Base of the file store's and the file evictor's machines: the world (a fake clock and filesystem,
    whose fault ledger the model reads too, so a fault is armed once), the model built in it, and the
    victims the model tried (its ``on_evict`` calls), in order."""

    impl: Any
    model: FileStoreModel

    def __init__(self, start: float) -> None:
        super().__init__()
        self.ready = False
        self.clock = FakeClock(start)
        self.fs = FakeFileSystem(self.clock)
        self.victims: list[str] = []

    def new_model(self, directory: str, *, disk_size: int, **settings: Any) -> FileStoreModel:
        """The model of a store or evictor in ``directory`` of the world, on a disk of ``disk_size``."""
        self.fs.disk_size = disk_size
        world: dict[str, Any] = {
            "clock": self.clock,
            "faults": self.fs.faults,
            "on_evict": self.victims.append,
        }
        return FileStoreModel(directory=directory, disk_size=disk_size, **world, **settings)

    def abstract_state(self) -> Hashable:
        if not self.ready:
            return None
        model = self.model
        files = tuple(sorted((n, len(d)) for n, (d, _m) in model.files.items()))
        return (
            model.cap,
            model.ratio,
            model.min_free,
            model.disk_size,
            files,
            tuple(model.lru),
            self.more_state(),
        )

    def more_state(self) -> Hashable:
        """What else this machine's abstract state tells apart."""
        raise NotImplementedError


def replaying_a_failure() -> bool:
    """Whether Hypothesis is replaying a failing example it already ran, to report it."""
    return currently_in_test_context() and current_build_context().is_final


@contextmanager
def independent_of_loaded_modules() -> Iterator[None]:
    """Generate as if no module of the caller's were loaded: a seed gives the same examples in any process.

    Hypothesis (6.131 on) draws about one number in twenty from the literals of every *local* module
    loaded in the process (its source outside site-packages and the standard library).  So the examples
    of a seeded run depended on what the process had imported before: measured on the oracle's
    ``ExtraCoverCheckedFirst`` without a snapshot, 75 examples to its E4 failure in a fresh process,
    508 and an E2 label once the test modules were imported.  Hypothesis has no setting for it, so
    this empties that pool (one private name, ``providers._get_local_constants``) for the run, and
    clears the cache of the values drawn from it, on entry and on exit; Hypothesis's own constants stay.
    Without that name (a Hypothesis that changed it) it changes nothing, and
    tests/unit/test_machine_base.py fails, saying so.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis without the module has no such pool
        yield
        return
    original = getattr(providers, "_get_local_constants", None)
    cache = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None)
    if original is None or cache is None or not hasattr(providers, "Constants"):
        yield
        return
    empty = providers.Constants()
    providers._get_local_constants = lambda: empty
    cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache.clear()


def run_machine(machine: type[LockstepMachine], run_settings: settings | None = None) -> Figures:
    """Run ``machine`` as a test and return what it covered (raises on a divergence).  Its examples
    depend on its seed and settings, not on the modules the process has loaded."""
    machine.figures = Figures()
    start = time.perf_counter()
    try:
        with independent_of_loaded_modules():
            run_state_machine_as_test(machine, settings=run_settings)
    finally:
        machine.figures.seconds = time.perf_counter() - start
    return machine.figures
