"""``--picture FILE.svg``: a history drawn as lanes of bars (a FAIL or UNKNOWN of ``--threads``, ``--trace``).

One lane per thread, one bar per call from its invoke to its return (a call
that never returned runs to the right edge, dashed), labelled with the call
and its result; the calls that no order explains are drawn in red; the
clock's instants (a recorded ``now``, a fake clock's reading) are ticks on
the lane.  Plain SVG 1.1, standard library only, no script: any browser or
viewer shows it.  Each bar is a ``<rect class="call">`` carrying
``data-thread`` and ``data-index`` (the call's position in the list given),
inside its lane's ``<g class="lane" data-thread=...>``, so a test (or a
reader with ``xml.etree``) can find them.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from xml.sax.saxutils import escape, quoteattr

from ..linearizability.checker import Operation

__all__ = ["draw_history", "write_history"]

WIDTH = 1000  # pixels of the time axis
LABELS = 110  # pixels left of it for the lane names
LANE = 58  # pixels per lane
BAR = 16  # a bar's height
MAX_LABEL = 48  # characters of a bar's label (the full call is in its <title>)


def _label(op: Operation) -> str:
    args = ", ".join(repr(a) for a in op.args)
    text = f"{op.name}({args}) -> {op.result!r}"
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


def draw_history(
    operations: Sequence[Operation],
    unexplained: Collection[int] = (),
    instants: Sequence[float] = (),
    title: str = "",
) -> str:
    """The SVG text of ``operations`` (``unexplained``: indices into it; ``instants``: clock readings)."""
    threads = list(
        dict.fromkeys(op.thread for op in sorted(operations, key=lambda o: (o.call, str(o.thread))))
    )
    finite = [t for op in operations for t in (op.call, op.end) if math.isfinite(t)] + [
        t for t in instants if math.isfinite(t)
    ]
    start, stop = (min(finite), max(finite)) if finite else (0.0, 1.0)
    span = (stop - start) or 1.0
    right = LABELS + WIDTH

    def x(t: float) -> float:
        return LABELS + (min(t, stop) - start) / span * (WIDTH - 20) + 10

    height = 40 + LANE * len(threads) + 30
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{right + 20}" height="{height}"'
        f' font-family="monospace" font-size="11">',
        f"<title>{escape(title or 'history')}</title>",
        f'<text x="10" y="20" font-size="13">{escape(title)}</text>',
    ]
    for lane, thread in enumerate(threads):
        top = 40 + lane * LANE
        out.append(f'<g class="lane" data-thread={quoteattr(str(thread))}>')
        out.append(
            f'<line x1="{LABELS}" y1="{top + LANE - 4}" x2="{right}" y2="{top + LANE - 4}" stroke="#ddd"/>'
        )
        out.append(f'<text x="10" y="{top + 22}">thread {escape(str(thread))}</text>')
        drawn = 0
        for index, op in enumerate(operations):
            if op.thread != thread:
                continue
            red = index in unexplained
            left, end = x(op.call), (x(op.end) if op.ret is not None else right)
            fill, stroke = ("#f8c4c4", "#c00") if red else ("#cfe0f5", "#36c")
            dash = ' stroke-dasharray="4 3"' if op.ret is None else ""
            out.append(
                f'<rect class="call{" unexplained" if red else ""}" data-thread={quoteattr(str(thread))}'
                f' data-index="{index}" x="{left:.1f}" y="{top + 4}" width="{max(end - left, 2):.1f}"'
                f' height="{BAR}" fill="{fill}" stroke="{stroke}"{dash}>'
                f"<title>{escape(str(op))}</title></rect>"
            )
            below = top + BAR + 16 + (drawn % 2) * 12  # neighbours' labels on two rows: short bars' fit
            drawn += 1
            out.append(f'<text x="{left + 2:.1f}" y="{below}">{escape(_label(op))}</text>')
            if op.now is not None:
                out.append(_tick(x(op.now), top, "#000"))
        out.append("</g>")
    for t in instants:
        out.append(
            f'<line class="instant" x1="{x(t):.1f}" y1="32" x2="{x(t):.1f}" y2="{height - 26}"'
            f' stroke="#999" stroke-dasharray="2 3"/>'
        )
    out.append(
        f'<text x="{LABELS}" y="{height - 8}">{start:g}</text>'
        f'<text x="{right - 80}" y="{height - 8}">{stop:g}</text>'
        f'<text x="{LABELS + 100}" y="{height - 8}">red: no order explains these calls;'
        f" ticks: the instant a call read; dashed: never returned</text>"
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _tick(at: float, top: int, colour: str) -> str:
    bottom = top + BAR + 7
    return f'<line class="now" x1="{at:.1f}" y1="{top + 1}" x2="{at:.1f}" y2="{bottom}" stroke="{colour}"/>'


def write_history(
    path: str,
    operations: Sequence[Operation],
    unexplained: Collection[int] = (),
    instants: Sequence[float] = (),
    title: str = "",
) -> None:
    """Write :func:`draw_history` to ``path``."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(draw_history(operations, unexplained, instants, title))
