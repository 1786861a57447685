"""Run ``crosshair check`` on one function's PEP 316 contracts, or on a broken variant, and judge it.

A function is checked alone (``file.py:LINE`` target, a subprocess each): its conditions come back as
:class:`Condition`, named by the function and the text of the contract line, never by a line number
alone.  No condition passes that checked nothing:

* a contract that names something its module does not define can never be met (decided statically,
  :mod:`spec.conformance.contract_names`): an error;
* ``Unable to meet precondition`` may only mean that CrossHair found no input within its budget on a
  loaded machine (two keys and two namespaces under five preconditions need a few seconds): the
  function is checked again with ``retry_timeout`` per condition, and only a second ``Unable`` is an
  error (a vacuous contract);
* a run that crashed (a traceback, ``CrossHairInternal`` included: CrossHair then prints none of the
  conditions it had judged, and exits 1 as for a counterexample) or reported no condition at all (the
  module did not load, or holds nothing checkable) is an error.

A broken variant (``spec/variants/crosshair``) must be refuted at least at every condition its golden
``.expected`` file lists (``function | condition``); one not refuted in the budget is checked again with
the retry budget before it fails.

The budget is CPU seconds per condition (``--per_condition_timeout`` counts process CPU time), so a
loaded machine does not shorten the search; ``HICACHE_CROSSHAIR_TIMEOUT`` sets it (``make verify``
passes ``--crosshair-timeout``, 1 s under ``--quick``).
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from spec.conformance.clauses import CLAUSE_ID
from spec.conformance.contract_names import unresolved_names

__all__ = [
    "Caught",
    "Condition",
    "ContractFunction",
    "Verdict",
    "catch",
    "check",
    "contract_functions",
    "contract_modules",
    "declared",
    "golden",
    "variants",
]

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = ROOT / "spec" / "variants" / "crosshair"
TIMEOUT = float(os.environ.get("HICACHE_CROSSHAIR_TIMEOUT", "3"))  # CPU seconds per condition
LINE_RE = re.compile(r"^(?P<path>.+?):(?P<line>\d+): (?P<kind>info|error): (?P<message>.*)$")
POST_RE = re.compile(r"^\s*post(?:\[[^\]]*\])?:", re.M)
UNMET = "Unable to meet precondition"
CRASH = "Traceback (most recent call last):"
TOOL_FAILURE = "CrossHair failed"  # the message of a run that checked nothing to be trusted
WHOLE_RUN = "(the whole run)"  # the condition text of a tool failure


@dataclass(frozen=True)
class Condition:
    """One condition as CrossHair judged it (``info``: no counterexample), or a failure of the run."""

    function: str
    text: str  # the contract line as written ("post: ..."), or WHOLE_RUN
    verdict: str  # "info" or "error"
    message: str

    @property
    def name(self) -> str:
        """The condition without path or line number: ``function | condition`` (the golden form)."""
        return f"{self.function} | {self.text}"


@dataclass(frozen=True)
class ContractFunction:
    """A function that carries PEP 316 postconditions, with the clause IDs its docstring names."""

    path: Path
    line: int  # of the ``def``
    end: int  # the function's last line
    name: str
    clauses: tuple[str, ...]

    @property
    def id(self) -> str:
        return ".".join((*self.path.relative_to(ROOT).with_suffix("").parts, self.name))


@dataclass(frozen=True)
class Verdict:
    conditions: list[Condition]
    output: str

    @property
    def failed(self) -> list[Condition]:
        return [c for c in self.conditions if c.verdict == "error"]


@dataclass(frozen=True)
class Caught:
    """What a broken variant's check found: ``ok`` when every golden condition was refuted and no run
    failed."""

    want: list[str]
    refuted: set[str]
    failures: list[str]
    output: str

    @property
    def ok(self) -> bool:
        return bool(self.want) and set(self.want) <= self.refuted and not self.failures

    def detail(self) -> str:
        missed = [w for w in self.want if w not in self.refuted]
        lines = [f"golden refutations {self.want}; CrossHair refuted {sorted(self.refuted)}"]
        lines += [f"not refuted: {m}" for m in missed] + self.failures
        return "\n".join(lines) + "\n" + self.output


def contract_modules() -> list[Path]:
    """The modules that carry PEP 316 contracts: the specs, and the production modules that have them.

    In ``hicache/`` only the pure argument checks (``hicache/_validate.py``) do; the classes are checked by
    refinement against the spec instead (see the docstring of ``hicache/metadata_cache.py``).
    """
    found = [*(ROOT / "spec" / "models").glob("*.py"), *(ROOT / "hicache").glob("*.py")]
    return sorted(p for p in found if re.search(r"^\s+post:", p.read_text(), re.M))


def _functions(path: Path) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    tree = ast.parse(path.read_text())
    nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return sorted(nodes, key=lambda n: n.lineno)


def contract_functions(paths: list[Path] | None = None) -> list[ContractFunction]:
    """Every function of ``paths`` (default: :func:`contract_modules`) whose docstring has a ``post:``."""
    found = []
    for path in contract_modules() if paths is None else paths:
        for node in _functions(path):
            doc = ast.get_docstring(node) or ""
            if POST_RE.search(doc):
                clauses = tuple(sorted(set(CLAUSE_ID.findall(doc))))
                found.append(
                    ContractFunction(path, node.lineno, node.end_lineno or node.lineno, node.name, clauses)
                )
    return found


def _owners(path: Path) -> dict[int, str]:
    """Each line inside a function of ``path`` -> the name of the innermost function holding it."""
    owner: dict[int, str] = {}
    for node in _functions(path):  # an inner function starts later: it wins
        owner.update(dict.fromkeys(range(node.lineno, (node.end_lineno or node.lineno) + 1), node.name))
    return owner


def _run(target: str, timeout: float) -> tuple[int, str]:
    """``crosshair check`` of ``target`` (``path`` or ``path:LINE``): its exit status and output."""
    argv = [sys.executable, "-m", "crosshair", "check", "--analysis_kind=PEP316"]
    argv += [f"--per_condition_timeout={timeout}", "--report_all", target]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout + proc.stderr


RUN: Callable[[str, float], tuple[int, str]] = _run  # the tooling tests script CrossHair's answers here


def _parse(path: Path, output: str) -> list[Condition]:
    source = path.read_text().splitlines()
    owner = _owners(path)
    found = []
    for raw in output.splitlines():
        m = LINE_RE.match(raw.strip())
        if m and Path(m["path"]).resolve() == path.resolve():
            line = int(m["line"])
            text = source[line - 1].strip() if 0 < line <= len(source) else f"line {line}"
            found.append(Condition(owner.get(line, "<module>"), text, m["kind"], m["message"]))
    return found


def _tool_failure(status: int, output: str, conditions: list[Condition]) -> str | None:
    """Why a run must not count as a check (it crashed, or reported no condition), or None when it may."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    last = (lines[-1] if lines else "no output")[:200]
    if CRASH in output:
        return f"{TOOL_FAILURE}: it crashed ({last})"
    if not conditions:
        return f"{TOOL_FAILURE}: no condition reported, exit status {status} ({last})"
    return None


def _retry_budget(timeout: float, retry_timeout: float | None) -> float:
    """Seconds per condition when a function is checked again: ``max(10 x timeout, 20 s)``."""
    return retry_timeout if retry_timeout is not None else max(10 * timeout, 20.0)


def _target(path: Path, line: int | None = None) -> str:
    rel = str(path.relative_to(ROOT))
    return rel if line is None else f"{rel}:{line}"


def check(fn: ContractFunction, timeout: float = TIMEOUT, retry_timeout: float | None = None) -> Verdict:
    """CrossHair's verdict on every postcondition of ``fn``; no condition passes that checked nothing."""
    unresolved = [u for u in unresolved_names(fn.path) if fn.line <= u.line <= fn.end]
    if unresolved:  # the precondition raises: CrossHair could only answer "Unable", so it is not asked
        source = fn.path.read_text().splitlines()
        return Verdict(
            [
                Condition(
                    fn.name,
                    source[u.line - 1].strip(),
                    "error",
                    f"vacuous contract: it names {u.name!r}, which the module does not define",
                )
                for u in unresolved
            ],
            "",
        )
    status, output = RUN(_target(fn.path, fn.line), timeout)
    conditions = _parse(fn.path, output)
    why = _tool_failure(status, output, conditions)
    if why is not None:
        return Verdict([Condition(fn.name, WHOLE_RUN, "error", why)], output)
    if any(UNMET in c.message for c in conditions):
        retry = _retry_budget(timeout, retry_timeout)
        status, again = RUN(_target(fn.path, fn.line), retry)
        output += f"-- retry with {retry:g} s per condition --\n{again}"
        again_conditions = _parse(fn.path, again)
        why = _tool_failure(status, again, again_conditions)
        if why is not None:  # keep the first run's answers: an unmet precondition stays vacuous
            conditions.append(Condition(fn.name, WHOLE_RUN, "error", f"{why} (retry)"))
        else:
            conditions = [
                replace(c, message=f"{c.message} (also with {retry:g} s per condition)")
                if UNMET in c.message
                else c
                for c in again_conditions
            ]
    return Verdict(
        [
            replace(c, verdict="error", message=f"vacuous contract: {c.message}") if UNMET in c.message else c
            for c in conditions
        ],
        output,
    )


def variants() -> list[Path]:
    """The broken variants CrossHair must refute: every module of ``spec/variants/crosshair``."""
    return sorted(p for p in VARIANTS.glob("*.py") if p.name != "__init__.py")


def golden(path: Path) -> list[str]:
    """The refutations ``path``'s ``.expected`` file requires (``function | condition``; ``[]`` if none)."""
    expected = path.with_suffix(".expected")
    text = expected.read_text() if expected.exists() else ""
    return [
        " | ".join(part.strip() for part in line.split("|", 1)) for line in text.splitlines() if line.strip()
    ]


def catch(path: Path, timeout: float = TIMEOUT, retry_timeout: float | None = None) -> Caught:
    """Check the broken variant ``path``: CrossHair must refute at least every golden condition.

    More refutations than the golden ones are fine (a broken function may break several contracts; the
    golden file lists those found reliably).  An empty or missing golden file never passes (it could never
    fail), nor does a golden condition the variant does not hold (its text was edited, or the function
    renamed), nor any run that crashed or reported nothing, even if another run refuted the golden ones.
    """
    want = golden(path)
    held = {c.name for fn in contract_functions([path]) for c in declared(fn)}
    failures = [f"golden condition not in {path.name}: {w}" for w in want if w not in held]
    refuted: set[str] = set()
    output = ""
    for label, budget in (("check", timeout), ("retry", _retry_budget(timeout, retry_timeout))):
        if label == "retry" and set(want) <= refuted:
            break
        status, text = RUN(_target(path), budget)
        output += f"-- {label} with {budget:g} s per condition --\n{text}"
        conditions = _parse(path, text)
        why = _tool_failure(status, text, conditions)
        if why is not None:
            failures.append(f"{why} ({label})")
        refuted |= {c.name for c in conditions if c.verdict == "error" and UNMET not in c.message}
    return Caught(want, refuted, failures, output)


def declared(fn: ContractFunction) -> list[Condition]:
    """The contract lines of ``fn``'s docstring, as conditions not yet judged."""
    source = fn.path.read_text().splitlines()
    lines = (source[n - 1].strip() for n in range(fn.line, fn.end + 1))
    return [Condition(fn.name, text, "info", "") for text in lines if re.match(r"(pre|post|raises)\b", text)]
