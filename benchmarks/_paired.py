"""Two systems' figures divided repetition by repetition, where both ran a row.

The table's ratios are each system's over ``raw``; some questions are about
two other systems: this code against 0.1's (``jobsched-0.1``) or an earlier
commit's (``jobsched-before``), jobsched
against the SQLite loop that keeps the store's indexes (``raw-indexed``),
registered jobs against the same ``FunctionJob`` calls (``jobsched-app`` over
``jobsched-fn``, W7c8 and W10c8).
Each repetition runs a row's systems one after the other, so the pair's
ratio shares that repetition's machine as a ratio to raw does.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

#: (numerator, denominator): reported for every row both ran.
PAIRS = (
    ("jobsched", "jobsched-0.1"),
    ("jobsched", "jobsched-before"),
    ("jobsched", "raw-indexed"),
    ("jobsched-app", "jobsched-fn"),
)


def ratios(measured: dict[str, Any], metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Every pair's ratio per row and metric both systems measured.

    :param metrics: each workload's metrics (``Workload.metrics``), by id.
    """
    out = []
    samples = measured["samples"]
    for top, bottom in PAIRS:
        for wid, size, systems in measured["rows"]:
            if top not in systems or bottom not in systems:
                continue
            a, b = samples[f"{wid}|{size}|{top}"], samples[f"{wid}|{size}|{bottom}"]
            if "skipped" in a or "skipped" in b:
                continue
            for metric in metrics[wid]:
                values = [
                    x[metric.key] / y[metric.key]
                    for x, y in zip(a["runs"], b["runs"], strict=True)
                    if "error" not in x and "error" not in y and y[metric.key]
                ]
                if values:
                    out.append(
                        {
                            "pair": f"{top} / {bottom}",
                            "workload": wid,
                            "size": size,
                            "metric": metric.key,
                            "label": f"{metric.label} ({metric.unit})",
                            "ratio": {
                                "median": statistics.median(values),
                                "min": min(values),
                                "max": max(values),
                                "n": len(values),
                            },
                        }
                    )
    return out


def markdown(entries: list[dict[str, Any]], fmt: Callable[[float], str]) -> list[str]:
    """The table of :func:`ratios`, or nothing when no pair ran."""
    if not entries:
        return []
    lines = [
        "",
        "Pairs, each repetition's two figures divided (above 1: the first faster for "
        "throughput, slower for costs):",
        "",
        "| pair | workload | n | metric | ratio |",
        "|---|---|---|---|---|",
    ]
    for e in entries:
        r = e["ratio"]
        ratio = f"{fmt(r['median'])}x [{fmt(r['min'])}, {fmt(r['max'])}]"
        name = e["workload"].removesuffix("mem")
        lines.append(f"| {e['pair']} | {name} | {e['size']:,} | {e['label']} | {ratio} |")
    return lines
