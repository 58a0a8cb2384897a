"""The parent process: plan the runs, run each in a fresh child, write the report."""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import (
    _backlog,
    _before,
    _c8,
    _paired,
    _postgres,
    _producers,
    _registered,
    _stores,
    _txenqueue,
    _v01,
    _workflow,
)
from benchmarks._counts import W15
from benchmarks._dashboard import W14
from benchmarks._dask import W13
from benchmarks._otel import W1OTEL
from benchmarks._queues import W18
from benchmarks._workloads import APS_W2_MAX, SYSTEMS, WORKLOADS

# Workloads measured by a module of their own, run as its child (W13: Dask;
# W7-W9: the SQLite store; W10-W12: PostgreSQL; W1otel: jobsched-otel's cost;
# W14: the dashboard; W15: operator reads at 1M; W16-W17: the producer API;
# W18: a small named queue beside a big one; W7c8, W10c8: the stores at
# concurrency 8; W19-W20: a queue that is behind; W21: a registered job's
# enqueue; W22: enqueue in the caller's own transaction; W23: a workflow
# fan-out/fan-in on every store).
WORKLOADS = {
    **WORKLOADS,
    W1OTEL.wid: W1OTEL,
    W13.wid: W13,
    **_stores.WORKLOADS,
    **_postgres.WORKLOADS,
    W14.wid: W14,
    W15.wid: W15,
    **_producers.WORKLOADS,
    W18.wid: W18,
    **_c8.WORKLOADS,
    _registered.W21.wid: _registered.W21,
    **_backlog.WORKLOADS,
    _txenqueue.W22.wid: _txenqueue.W22,
    _workflow.W23.wid: _workflow.W23,
}
CHILD_MODULES = {
    W1OTEL.wid: "benchmarks._otel",
    W13.wid: "benchmarks._dask",
    **dict.fromkeys(_stores.WORKLOADS, _stores.__name__),
    **dict.fromkeys(_postgres.WORKLOADS, _postgres.__name__),
    W14.wid: "benchmarks._dashboard",
    W15.wid: "benchmarks._counts",
    **dict.fromkeys(_producers.WORKLOADS, _producers.__name__),
    W18.wid: "benchmarks._queues",
    **dict.fromkeys(_c8.WORKLOADS, _c8.__name__),
    _registered.W21.wid: _registered.__name__,
    **dict.fromkeys(_backlog.WORKLOADS, _backlog.__name__),
    _txenqueue.W22.wid: _txenqueue.__name__,
    _workflow.W23.wid: _workflow.__name__,
}
SYSTEMS = (
    *SYSTEMS,
    *_stores.EXTRA_SYSTEMS,
    *_postgres.EXTRA_SYSTEMS,
    _v01.SYSTEM,
    _before.SYSTEM,
    *_registered.SYSTEMS,
)
#: A run without --systems: jobsched-before only on request (on main it is
#: main against itself, minutes of noise in the full run).
DEFAULT_SYSTEMS = tuple(s for s in SYSTEMS if s != _before.SYSTEM)

RESULTS = Path(__file__).parent / "results"
#: What a system does not run, and why (shown in the table instead of a figure).
NOT_APPLICABLE = {
    ("apscheduler4", "W6"): "n/a (no job dependencies)",
    ("apscheduler4", "W4stall"): "not measured (a row for jobsched's process executor)",
    ("apscheduler4", "W4cold"): "not measured (a row for jobsched's process executor)",
    ("apscheduler4", "W2p"): "n/a (no priorities)",
    ("apscheduler4", "W13"): "n/a (no Dask executor)",
    ("apscheduler4", "W1otel"): "n/a (a row for jobsched-otel)",
    ("apscheduler4", "W8"): "not measured (W7 only)",
    ("apscheduler4", "W9"): "not measured (W7 only)",
    ("apscheduler4", "W11"): "not measured (W10 only)",
    ("apscheduler4", "W12"): "not measured (W10 only)",
    ("apscheduler4", "W14"): "n/a (no dashboard)",
    ("apscheduler4", "W15"): "n/a (a row for jobsched's stores)",
    ("apscheduler4", "W16"): "not measured (a row for jobsched's wait())",
    ("apscheduler4", "W17"): "not measured (a row for jobsched's job_id=)",
    ("apscheduler4", "W18"): "n/a (no named queues)",
    ("apscheduler4", "W7c8"): "not measured (huey is W7c8's peer)",
    ("apscheduler4", "W10c8"): "not measured (procrastinate is W10c8's peer)",
    ("apscheduler4", "W21"): "n/a (a row for jobsched's registered jobs)",
}
TOO_SLOW = "too slow (skipped)"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="jobsched against plain asyncio (raw) and APScheduler 4.",
    )
    parser.add_argument("--quick", action="store_true", help="small sizes (about 10x smaller)")
    parser.add_argument("--reps", type=int, default=5, help="repetitions per figure (default 5)")
    parser.add_argument(
        "--only", default="", help="comma-separated workloads, e.g. W1,W3 (default: all)"
    )
    parser.add_argument(
        "--systems",
        default=",".join(DEFAULT_SYSTEMS),
        help=f"comma-separated systems; raw is always run (default: all but {_before.SYSTEM})",
    )
    parser.add_argument(
        "--sizes",
        default="",
        help="override sizes, e.g. W1=1000,W2=100:1000 (':' separates several)",
    )
    parser.add_argument(
        "--aps-full", action="store_true", help="run W2 at 1M jobs on APScheduler 4 too"
    )
    parser.add_argument("--no-plot", action="store_true", help="skip the PNG plot")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where latest.md/.json/.png go")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per child run")
    args = parser.parse_args(argv)
    if args.reps < 1:
        parser.error(f"--reps must be >= 1, got {args.reps}")
    args.only = _names(parser, args.only, list(WORKLOADS), "--only") or list(WORKLOADS)
    if "W2" in args.only and "W2mem" not in args.only:
        args.only.append("W2mem")
    systems = _names(parser, args.systems, list(SYSTEMS), "--systems") or list(DEFAULT_SYSTEMS)
    args.systems = ["raw", *[s for s in systems if s != "raw"]]
    args.size_overrides = {}
    for item in filter(None, args.sizes.split(",")):
        wid, _, sizes = item.partition("=")
        if wid not in WORKLOADS or not sizes:
            parser.error(f"--sizes item {item!r} must look like W1=1000 or W2=100:1000")
        args.size_overrides[wid] = tuple(int(s) for s in sizes.split(":"))
    return args


def _names(parser: argparse.ArgumentParser, text: str, known: list[str], flag: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"{flag}: unknown {unknown}; choose from {','.join(known)}")
    return names


def plan(args: argparse.Namespace) -> list[tuple[str, int, list[str]]]:
    """(workload, size, systems to run) for every row, in run order."""
    rows = []
    for wid in args.only:
        workload = WORKLOADS[wid]
        sizes = args.size_overrides.get(wid, workload.quick_sizes if args.quick else workload.sizes)
        for size in sizes:
            rows.append((wid, size, list(args.systems)))
    return rows


def skip_reason(system: str, wid: str, size: int, args: argparse.Namespace) -> str | None:
    if (system, wid) in NOT_APPLICABLE:
        return NOT_APPLICABLE[(system, wid)]
    if system == _before.SYSTEM:
        ran = wid in _before.WORKLOADS
        return None if ran else "n/a (the code before runs W1, W2, W6, W7c8 and W10c8)"
    if system == "raw-indexed":
        ran = wid in ("W7", "W7c8")
        return None if ran else "n/a (raw's SQLite loop with the store's indexes: W7, W7c8)"
    if system in _registered.SYSTEMS:
        ran = wid in _c8.PEERS
        return None if ran else "n/a (registered jobs at concurrency 8: W7c8, W10c8)"
    if wid == _txenqueue.W22.wid and system not in ("raw", "jobsched"):
        return "n/a (W22 runs raw and jobsched)"
    if wid == _workflow.W23.wid and system not in ("raw", "jobsched"):
        return "n/a (W23 runs raw and jobsched)"
    if wid in _backlog.WORKLOADS and system not in ("raw", "jobsched"):
        return f"n/a ({wid} runs raw and jobsched on PostgreSQL)"
    if wid in _c8.PEERS and system not in ("raw", "jobsched", _c8.PEERS[wid]):
        return f"n/a ({wid} runs raw, jobsched and {_c8.PEERS[wid]})"
    if _c8.PEERS.get(wid) == system:
        return None
    if system in _stores.EXTRA_SYSTEMS and wid != "W7":
        return f"n/a (a row for {system}'s SQLite store, W7)"
    if system in _postgres.EXTRA_SYSTEMS and wid != "W10":
        return f"n/a (a row for {system} on PostgreSQL, W10)"
    if system == _v01.SYSTEM and wid not in _v01.WORKLOADS:
        return "n/a (0.1's code runs the memory rows W1, W2 and W6)"
    if system == "apscheduler4" and wid.startswith("W2") and size > APS_W2_MAX:
        return None if args.aps_full else TOO_SLOW
    return None


def run_child(system: str, wid: str, size: int, timeout: float) -> dict[str, Any]:
    """One measurement in a fresh interpreter; its metrics, or an error."""
    child = CHILD_MODULES.get(wid, "benchmarks._child")
    root = Path(__file__).parent.parent
    first = [str(root)]
    if system in (_v01.SYSTEM, _before.SYSTEM):
        # jobsched's own child, on 0.1's code or on an earlier commit's.
        extract = _v01.pythonpath if system == _v01.SYSTEM else _before.pythonpath
        system = "jobsched"
        try:
            first = [*extract(), str(root)]
        except RuntimeError as exc:
            return {"error": str(exc)}
    cmd = [sys.executable, "-m", child, system, wid, str(size)]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [*first, os.environ.get("PYTHONPATH")])),
    }
    try:
        done = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, cwd=root, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f}s"}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": last[:200]}
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def measure(args: argparse.Namespace, log: Any = print) -> dict[str, Any]:
    """Run every row ``args.reps`` times, systems alternating; the raw samples."""
    rows = plan(args)
    samples: dict[str, Any] = {}
    for rep in range(args.reps):
        for wid, size, systems in rows:
            # Rotate the order each repetition so no system always runs first.
            order = systems[rep % len(systems) :] + systems[: rep % len(systems)]
            for system in order:
                cell = samples.setdefault(f"{wid}|{size}|{system}", {"runs": []})
                reason = skip_reason(system, wid, size, args)
                if reason is not None:
                    cell["skipped"] = reason
                    continue
                t0 = time.perf_counter()
                result = run_child(system, wid, size, args.timeout)
                cell["runs"].append(result)
                log(
                    f"rep {rep + 1}/{args.reps} {wid} n={size:,} {system}: "
                    f"{result} ({time.perf_counter() - t0:.1f}s)"
                )
    return {"rows": [[w, s, sy] for w, s, sy in rows], "samples": samples}


def summarise(measured: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per (workload, size, metric, system): value and ratio to raw."""
    out = []
    samples = measured["samples"]
    for wid, size, systems in measured["rows"]:
        for metric in WORKLOADS[wid].metrics:
            raw_runs = samples[f"{wid}|{size}|raw"]["runs"]
            for system in systems:
                cell = samples[f"{wid}|{size}|{system}"]
                entry: dict[str, Any] = {
                    "workload": wid,
                    "size": size,
                    "metric": metric.key,
                    "label": metric.label,
                    "unit": metric.unit,
                    "system": system,
                }
                if "skipped" in cell:
                    entry["note"] = cell["skipped"]
                    out.append(entry)
                    continue
                values, ratios, errors = [], [], []
                for run, raw in zip(cell["runs"], raw_runs, strict=True):
                    if "error" in run or "error" in raw:
                        errors.append(run.get("error") or raw.get("error"))
                        continue
                    values.append(run[metric.key])
                    if raw[metric.key]:
                        ratios.append(run[metric.key] / raw[metric.key])
                if errors and not values:
                    entry["note"] = f"failed: {errors[0]}"
                entry["value"] = _stats(values)
                entry["ratio"] = _stats(ratios)
                out.append(entry)
        if wid in ("W2", "W8"):
            out.extend(_growth(measured, wid))
    return _dedupe(out)


def _growth(measured: dict[str, Any], wid: str) -> list[dict[str, Any]]:
    """Dispatch cost at the largest ``wid`` size over the smallest, per repetition."""
    sizes = sorted({s for w, s, _ in measured["rows"] if w == wid})
    if len(sizes) < 2:
        return []
    lo, hi = sizes[0], sizes[-1]
    samples = measured["samples"]

    def growth(system: str) -> list[float | None]:
        a, b = samples[f"{wid}|{lo}|{system}"], samples[f"{wid}|{hi}|{system}"]
        if "skipped" in a or "skipped" in b:
            return []
        return [
            None if "error" in x or "error" in y else y["dispatch_us"] / x["dispatch_us"]
            for x, y in zip(a["runs"], b["runs"], strict=True)
        ]

    raw = growth("raw")
    out = []
    for system in next(sy for w, _, sy in measured["rows"] if w == wid):
        own = growth(system)
        entry: dict[str, Any] = {
            "workload": wid,
            "size": f"{lo:,}->{hi:,}",
            "metric": "growth",
            "label": "dispatch growth",
            "unit": "x",
            "system": system,
        }
        if not own:
            skipped = [samples[f"{wid}|{s}|{system}"].get("skipped") for s in (lo, hi)]
            entry["note"] = next(filter(None, skipped), TOO_SLOW)
        else:
            pairs = [
                (g, r) for g, r in zip(own, raw, strict=True) if g is not None and r is not None
            ]
            entry["value"] = _stats([g for g, _ in pairs])
            entry["ratio"] = _stats([g / r for g, r in pairs])
        out.append(entry)
    return out


def _dedupe(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen, out = set(), []
    for e in entries:
        key = (e["workload"], e["size"], e["metric"], e["system"])
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


def _stats(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "n": len(values),
    }


def _fmt(x: float) -> str:
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 0.1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def markdown(
    summary: list[dict[str, Any]],
    args: argparse.Namespace,
    meta: dict[str, Any],
    paired: list[dict[str, Any]],
) -> str:
    systems = [s for s in args.systems if s != "raw"]
    lines = [
        "# jobsched benchmarks",
        "",
        f"`{meta['command']}` on {meta['machine']}, {meta['date']}."
        + (f" jobsched-before: `{meta['jobsched_before']}`." if "jobsched_before" in meta else ""),
        f"Each figure: median [min, max] over {args.reps} repetitions, each run in a fresh "
        "process, systems alternating. Ratios are against `raw` (plain asyncio / "
        "concurrent.futures) in the same repetition: above 1 is faster for throughput, "
        "slower for costs and latencies.",
        "",
        "| workload | n | metric | raw | " + " | ".join(f"{s} | {s} / raw" for s in systems) + " |",
        "|---|---|---|---|" + "---|---|" * len(systems),
    ]
    by_key = {(e["workload"], e["size"], e["metric"], e["system"]): e for e in summary}
    order = []
    for e in summary:
        k = (e["workload"], e["size"], e["metric"])
        if k not in order:
            order.append(k)
    for wid, size, metric in order:
        raw = by_key.get((wid, size, metric, "raw"), {})
        size_text = f"{size:,}" if isinstance(size, int) else size
        # W2's memory run is its own workload in the JSON, a W2 row here.
        cells = [wid.removesuffix("mem"), size_text, f"{raw.get('label')} ({raw.get('unit')})"]
        cells.append(_value(raw))
        for system in systems:
            e = by_key.get((wid, size, metric, system), {})
            if "note" in e and not e.get("value"):
                cells += [e["note"], "—"]
            else:
                cells += [_value(e), _ratio(e)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Workloads:", ""]
    for w in WORKLOADS.values():
        if w.wid != "W2mem":
            lines.append(f"- **{w.wid}**: {w.what}.")
    lines += [
        "",
        "W2 memory: bytes per queued job, tracemalloc around creating and queueing "
        "the jobs (same method for each system). W2 dispatch growth: dispatch cost at "
        "the largest size over the smallest; its ratio compares that growth with raw's "
        "(W8's likewise). W7-W9: raw is a hand-written sqlite3 loop with the same "
        "durability; APScheduler 4 and huey run W7 at 1,000 and 5,000 jobs; store is "
        "jobsched's SQLite store driven without a scheduler (W7 only); raw-indexed is raw's "
        "loop on a table that keeps the store's status and finished-time indexes too "
        "(W7, W7c8). jobsched-0.1 is jobsched 0.1's own code (W1, W2, W6); jobsched-before "
        "is this checkout's code at $JOBSCHED_BEFORE, by default the merge base with main "
        "(W1, W2, W6, W7c8, W10c8). W10-W12: raw "
        "is a hand-written psycopg loop (batched inserts, SKIP LOCKED claims, completions) "
        "on the same server; APScheduler 4 and procrastinate run W10 at 500 and 2,000 jobs. "
        "W14: raw is the same dashboard page on a store without the finished history; the "
        "bar is 300 ms per page at 1M. W15: raw is the same stores and pages at 10,000 "
        "finished jobs, so the ratio is the growth to n (bar: 1.5x, and p99 under 100 ms). "
        "W16: the target is p99 under 50 ms; W17: own-id time over plain time, target "
        "1.3x at most; raw is the same ratio for hand-written SQL. W18: raw is the same "
        "worker with the big queue empty, so the ratio is what the big queue costs (bar: 1.5x). "
        "W7c8, W10c8: W7 and W10 with 8 workers for jobsched, huey's consumer with 8 worker "
        f"threads (at most {_c8.MAX_JOBS['huey']:,} jobs) and procrastinate with "
        f"concurrency=8 (at most {_c8.MAX_JOBS['procrastinate']:,}); "
        "raw is W7's and W10's loop, batches of 64 (issue 25's bars: jobsched >= 0.25x raw, "
        ">= 5x huey, >= 10x procrastinate); jobsched-app runs them as registered jobs "
        "(@app.job) and jobsched-fn as the same FunctionJobs (issue 33's bar: "
        "jobsched-app / jobsched-fn >= 1.0x). W21: registered / FunctionJob time, "
        "target 1.0x at most; raw is the same ratio for hand-written inserts. "
        "W23: one workflow of n no-op jobs and a fan-in over all their results, per store; "
        "raw is the same rows, edges, countdown and one-query fan-in in hand-written "
        "asyncio, sqlite3 and psycopg (the first bar: enqueue under 1 s on each store).",
    ]
    lines += _paired.markdown(paired, _fmt)
    lines.append("")
    return "\n".join(lines)


def _value(e: dict[str, Any]) -> str:
    v = e.get("value")
    return _fmt(v["median"]) if v else e.get("note", "—")


def _ratio(e: dict[str, Any]) -> str:
    r = e.get("ratio")
    if not r:
        return "—"
    return f"{_fmt(r['median'])}x [{_fmt(r['min'])}, {_fmt(r['max'])}]"


def plot(measured: dict[str, Any], path: Path) -> bool:
    """W2 dispatch µs/job against queue size, log x; False if there is nothing to plot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted({s for w, s, _ in measured["rows"] if w == "W2"})
    if not sizes:
        return False
    systems = next(sy for w, _, sy in measured["rows"] if w == "W2")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for system in systems:
        xs, med, lo, hi = [], [], [], []
        for size in sizes:
            cell = measured["samples"][f"W2|{size}|{system}"]
            values = [r["dispatch_us"] for r in cell["runs"] if "error" not in r]
            if values:
                xs.append(size)
                m = statistics.median(values)
                med.append(m)
                lo.append(m - min(values))
                hi.append(max(values) - m)
        if xs:
            ax.errorbar(xs, med, yerr=[lo, hi], marker="o", capsize=3, label=system)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("jobs queued")
    ax.set_ylabel("dispatch cost (µs per job, median, min-max bars)")
    ax.set_title("W2: per-job dispatch cost against queue size (1 worker)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    measured = measure(args, log=lambda line: print(line, file=sys.stderr, flush=True))
    summary = summarise(measured)
    meta = {
        "command": "uv run --group bench python -m benchmarks"
        + (" " + " ".join(argv if argv is not None else sys.argv[1:])).rstrip(),
        "machine": f"CPython {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "seconds": round(time.perf_counter() - started, 1),
    }
    if _before.SYSTEM in args.systems:
        # Which code "before" was: the figures mean nothing without it.
        try:
            meta["jobsched_before"] = _before.commit()
        except RuntimeError as exc:
            meta["jobsched_before"] = str(exc)
    args.out.mkdir(parents=True, exist_ok=True)
    paired = _paired.ratios(measured, {wid: w.metrics for wid, w in WORKLOADS.items()})
    table = markdown(summary, args, meta, paired)
    (args.out / "latest.md").write_text(table)
    (args.out / "latest.json").write_text(
        json.dumps({"meta": meta, "summary": summary, "paired": paired, **measured}, indent=1)
    )
    if not args.no_plot and plot(measured, args.out / "w2_dispatch.png"):
        print(f"wrote {args.out / 'w2_dispatch.png'}", file=sys.stderr)
    print(table)
    print(f"wrote {args.out / 'latest.md'} ({meta['seconds']}s)", file=sys.stderr)
    return 0
