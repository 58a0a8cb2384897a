"""A laid-out workflow graph (:mod:`._graph`) as server-rendered SVG.

Built as a string, as the timeline's bars are (:func:`._render.timeline_bars`):
numbers are formatted here (``int()``, ``:.1f``), and every text that came
from a user (job names, progress messages) passes :func:`markupsafe.escape`,
so the result is safe to mark up. Colours are the page's status classes
(``s-<status>``); the stylesheet fills them inside ``svg.graph``.
"""

from __future__ import annotations

from markupsafe import Markup, escape

from ._graph import MIXED, NODE_H, NODE_W, OUTSIDE, Layout, Node

#: The most characters of a name a node shows (its title has all of it).
NAME_WIDTH = 24
#: Tall enough for a stacked status bar, thin enough to leave the text room.
BAR_H = 5


def job_label(number: int, own_ids: dict[int, str]) -> str:
    """A job as the graph names it: ``job-<n>``, or the id given at submit
    (an upstream outside the jobs read shows by its number, ``job--<n>``)."""
    own = own_ids.get(number)
    return own if own is not None else f"job-{number}"


def _cut(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def percent(fraction: float) -> str:
    """A progress fraction as the page says it: ``40%``."""
    return f"{fraction * 100:.0f}%"


def svg(graph: Layout) -> Markup:
    """The whole ``<svg>``: edges first (under the nodes), then the nodes."""
    parts = [
        f'<svg class="graph" xmlns="http://www.w3.org/2000/svg" aria-label="the workflow\'s jobs" '
        f'width="{int(graph.width)}" height="{int(graph.height)}" '
        f'viewBox="0 0 {int(graph.width)} {int(graph.height)}">'
        '<defs><marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" '
        'markerHeight="7" orient="auto"><path class="arrowhead" d="M0,0 L8,4 L0,8 z"/>'
        '</marker></defs><g class="edges">'
    ]
    nodes, own = graph.nodes, graph.own_ids
    for edge in graph.edges:
        up, down = nodes[edge.up], nodes[edge.down]
        kind = "edge run" if edge.run else "edge"
        what = "runs however it ends" if edge.run else "runs once it completed"
        many = f"{int(edge.count)} edges: " if edge.count > 1 else ""
        parts.append(
            f'<path class="{kind}" data-edge="{int(up.jobs[0])}-{int(down.jobs[0])}" '
            f'data-count="{int(edge.count)}" d="{edge.path}" marker-end="url(#arrow)">'
            f"<title>{many}{escape(_names(up, own))} → {escape(_names(down, own))} "
            f"({what})</title></path>"
        )
    parts.append('</g><g class="nodes">')
    parts += [_node(node, own) for node in nodes]
    parts.append("</g></svg>")
    return Markup("".join(parts))


def _names(node: Node, own: dict[int, str]) -> str:
    if node.folded:
        return f"{node.name} x{len(node.jobs)}"
    return job_label(node.jobs[0], own)


def _node(node: Node, own: dict[int, str]) -> str:
    x, y = node.x, node.y
    if node.outside and not node.folded:
        number = int(node.jobs[0])
        return (
            f'<a href="/jobs/{number}" class="node outside" data-job="{number}">'
            f"<title>{escape(job_label(number, own))}: an upstream outside the jobs shown</title>"
            f'<rect class="box outside" x="{x:.1f}" y="{y:.1f}" width="{NODE_W}" '
            f'height="{NODE_H}" rx="4"/>{_text(node, job_label(number, own), OUTSIDE)}'
            "</a>"
        )
    if node.folded:
        first, last = job_label(node.jobs[0], own), job_label(node.jobs[-1], own)
        counts = ", ".join(f"{int(n)} {s.value}" for s, n in node.counts)
        title = f"{node.name}: {len(node.jobs)} jobs, {first}..{last}" + (
            f": {counts}" if counts else ""
        )
        return (
            f'<g class="node folded" data-fold="{len(node.jobs)}" data-first="{int(node.jobs[0])}">'
            f"<title>{escape(title)}</title>"
            f'<rect class="box folded" x="{x:.1f}" y="{y:.1f}" width="{NODE_W}" '
            f'height="{NODE_H}" rx="4"/>'
            f"{_text(node, _folded_head(node), counts)}"
            f"{_stacked(node)}</g>"
        )
    number = int(node.jobs[0])
    status = node.status
    assert status is not None  # a single held job
    line = f"{job_label(number, own)} · {status.value}"
    title = f"{node.name} {job_label(number, own)}: {status.value}, {int(node.attempts)} attempt(s)"
    bar = ""
    if node.progress is not None:
        line += f" · {percent(node.progress)}"
        title += f", {percent(node.progress)}"
        width = max(0.0, min(1.0, node.progress)) * (NODE_W - 2)
        bar = (
            f'<rect class="track" x="{x + 1:.1f}" y="{y + NODE_H - BAR_H - 1:.1f}" '
            f'width="{NODE_W - 2}" height="{BAR_H}"/>'
            f'<rect class="progress" x="{x + 1:.1f}" y="{y + NODE_H - BAR_H - 1:.1f}" '
            f'width="{width:.1f}" height="{BAR_H}"/>'
        )
    if node.progress_message:
        title += f" ({node.progress_message})"
    return (
        f'<a href="/jobs/{number}" class="node" data-job="{number}" data-status="{status.value}">'
        f"<title>{escape(title)}</title>"
        f'<rect class="box s-{status.value}" x="{x:.1f}" y="{y:.1f}" width="{NODE_W}" '
        f'height="{NODE_H}" rx="4"/>{_text(node, _cut(node.name, NAME_WIDTH), line)}{bar}</a>'
    )


def _folded_head(node: Node) -> str:
    """``fetch x1000``, or ``1000 jobs`` for a node of several names."""
    if node.name == MIXED:
        return f"{len(node.jobs)} jobs"
    return f"{_cut(node.name, NAME_WIDTH - 6)} x{len(node.jobs)}"


def _text(node: Node, head: str, sub: str) -> str:
    return (
        f'<text class="name" x="{node.x + 7:.1f}" y="{node.y + 15:.1f}">{escape(head)}</text>'
        f'<text class="sub" x="{node.x + 7:.1f}" y="{node.y + 28:.1f}">{escape(sub)}</text>'
    )


def _stacked(node: Node) -> str:
    """A folded node's statuses as one bar of coloured parts along its foot."""
    total = sum(n for _, n in node.counts) or 1
    left = node.x + 1
    parts = []
    for status, n in node.counts:
        width = n / total * (NODE_W - 2)
        parts.append(
            f'<rect class="part s-{status.value}" x="{left:.1f}" '
            f'y="{node.y + NODE_H - BAR_H - 1:.1f}" width="{width:.1f}" height="{BAR_H}"/>'
        )
        left += width
    return "".join(parts)
