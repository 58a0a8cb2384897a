"""CPU per job of W10c8 or W7c8 at several commits: the member's and the server's, counted.

``python -m benchmarks._cpu_per_job [--workload W10c8|W7c8] [--jobs N]
[--runs N] [--json] REV [REV ...]`` runs jobsched's child of the workload
(``python -m benchmarks._c8 jobsched WORKLOAD N``, as the suite does) for
each REV in turn, ``--runs`` rounds, the order rotating each round (ABC,
BCA, CAB, ...). A REV is anything ``git rev-parse`` takes, its
``packages/*/src`` put first on ``PYTHONPATH`` as ``jobsched-before`` does
(:func:`benchmarks._before.pythonpath`), or ``this``: this checkout's code
as it is. The harness (``benchmarks``) is always this checkout's.

Timed paired runs on a loaded 2-core machine resolve 5-10% (issue 34's "W10c8
and W7c8 no slower"); CPU counted by the kernel is steadier, and split in two
it says where a difference lies:

- client: the child's user + system CPU (``getrusage(RUSAGE_CHILDREN)``
  around it): the engine, the store's client side, the driver;
- server (W10c8): the whole PostgreSQL cluster's CPU over the child's life.
  The postmaster is the parent of the backend an admin connection to
  ``benchmarks._postgres.SERVER`` (``$JOBSCHED_BENCH_PG``) gets; the
  cluster's CPU is the postmaster's own and reaped children's time
  (``/proc/PID/stat`` utime, stime, cutime, cstime: a backend's time lands
  in cutime/cstime when it exits) plus every live child's utime + stime,
  sampled before and after the child. If that pid is not on this machine
  (a remote server, another pid namespace), client only.

Per REV: median [min, max] over the runs of client, server and total µs per
job and the child's own jobs/s, and each median's ratio to the first REV's.

Caveats: the counts include the child's start-up (the interpreter, imports)
and the database's creation and drop, the same for every REV (each REV's
code is compiled before the first run, so no run pays for that), so a smaller
``--jobs`` dilutes a difference; the server's count is the whole cluster's,
so anything else using it in the meantime (autovacuum, checkpoints, other
clients) lands in it: run with autovacuum off (the workload's churn wakes it)
and nothing else on the server. Clock ticks (``SC_CLK_TCK``, usually 10 ms)
per process: negligible at tens of thousands of jobs.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import _before

ROOT = Path(__file__).parent.parent
WORKLOADS = ("W10c8", "W7c8")
#: The REV naming this checkout's code as it is (not a commit's).
THIS = "this"
_TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class _Stat:
    ppid: int
    utime: int
    stime: int
    cutime: int
    cstime: int


def _stat(pid: int, proc: Path) -> _Stat | None:
    """A process's ``/proc/PID/stat`` times (clock ticks); ``None`` once it is gone."""
    try:
        text = (proc / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # comm (field 2) may hold spaces and parentheses: fields after its last ")".
    fields = text[text.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state); ppid is field 4, utime..cstime 14-17.
    ppid, utime, stime, cutime, cstime = (int(fields[i]) for i in (1, 11, 12, 13, 14))
    return _Stat(ppid, utime, stime, cutime, cstime)


def cluster_ticks(postmaster: int, proc: Path = Path("/proc")) -> int:
    """The CPU clock ticks a process tree has used: the postmaster's own and its
    reaped children's, plus each live child's (direct children only: the
    postmaster forks every backend and worker itself).

    :raises ProcessLookupError: the postmaster is gone.
    """
    # Children first: one reaped between the two reads is then counted twice
    # (as live, then in cutime) rather than not at all; rare, and a few ticks.
    live = 0
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        child = _stat(int(entry.name), proc)
        if child is not None and child.ppid == postmaster:
            live += child.utime + child.stime
    own = _stat(postmaster, proc)
    if own is None:
        raise ProcessLookupError(f"postmaster {postmaster} is gone")
    return own.utime + own.stime + own.cutime + own.cstime + live


def postmaster_of(backend: int, proc: Path = Path("/proc")) -> int | None:
    """The parent of a backend's pid (the postmaster), or ``None`` if that pid is
    not a PostgreSQL process on this machine."""
    try:
        comm = (proc / str(backend) / "comm").read_text().strip()
        status = (proc / str(backend) / "status").read_text()
    except (FileNotFoundError, PermissionError):
        return None
    if not comm.startswith("postgres"):
        return None
    for line in status.splitlines():
        if line.startswith("PPid:"):
            return int(line.split()[1])
    return None


def find_postmaster() -> int | None:
    """The local server's postmaster, by an admin connection that is closed again."""
    import psycopg

    from benchmarks._postgres import SERVER

    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
        row = admin.execute("SELECT pg_backend_pid()").fetchone()
    assert row is not None
    return postmaster_of(int(row[0]))


def _pythonpath(rev: str) -> list[str]:
    """What goes first on the child's ``PYTHONPATH`` for ``rev``, its code compiled.

    A commit's extracted packages have no ``__pycache__``: the first child
    importing them would compile them (a few hundred ms of CPU, 100 µs per
    job at 2,000 jobs) and no other run would. So every REV's packages, and
    the harness, are compiled here, before any run.
    """
    first = [] if rev == THIS else _before.pythonpath(rev)
    sources = first or [str(path) for path in sorted(ROOT.glob("packages/*/src"))]
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", *sources, str(ROOT / "benchmarks")],
        stdout=subprocess.DEVNULL,
        check=True,
    )
    return [*first, str(ROOT)]


def run_once(
    workload: str, jobs: int, first: list[str], postmaster: int | None, timeout: float
) -> dict[str, Any]:
    """One child: its jobs/s, its CPU, and the cluster's over its life (µs)."""
    cmd = [sys.executable, "-m", "benchmarks._c8", "jobsched", workload, str(jobs)]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [*first, os.environ.get("PYTHONPATH")])),
    }
    server0 = cluster_ticks(postmaster) if postmaster is not None else 0
    usage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        done = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f}s"}
    usage1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    server1 = cluster_ticks(postmaster) if postmaster is not None else 0
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": last[:300]}
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    client = (usage1.ru_utime - usage0.ru_utime) + (usage1.ru_stime - usage0.ru_stime)
    out = {"jobs_per_s": figures["jobs_per_s"], "client_us": client * 1e6}
    if postmaster is not None:
        out["server_us"] = (server1 - server0) / _TICK * 1e6
    return out


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def summarize(revs: list[str], runs: dict[str, list[dict[str, Any]]], jobs: int) -> list[Any]:
    """Per REV: median, min and max of each figure (µs per job, jobs/s), and each
    median's ratio to the first REV's."""
    rows: list[dict[str, Any]] = []
    for rev in revs:
        good = [r for r in runs[rev] if "error" not in r]
        row: dict[str, Any] = {"rev": rev, "runs": len(good), "errors": len(runs[rev]) - len(good)}
        if good:
            per_job = {"client": [r["client_us"] / jobs for r in good]}
            if all("server_us" in r for r in good):
                per_job["server"] = [r["server_us"] / jobs for r in good]
                per_job["total"] = [(r["client_us"] + r["server_us"]) / jobs for r in good]
            else:
                per_job["total"] = per_job["client"]
            for name, values in per_job.items():
                row[f"{name}_us_per_job"] = _spread(values)
            row["jobs_per_s"] = _spread([r["jobs_per_s"] for r in good])
        rows.append(row)
    base = rows[0]
    for row in rows:
        for key, figure in row.items():
            if isinstance(figure, dict) and isinstance(base.get(key), dict):
                figure["ratio"] = figure["median"] / base[key]["median"]
    return rows


def _parse(argv: list[str]) -> tuple[dict[str, Any], list[str]]:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m benchmarks._cpu_per_job")
    parser.add_argument("--workload", choices=WORKLOADS, default="W10c8")
    parser.add_argument("--jobs", type=int, default=40_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=1800, help="per child, seconds")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("revs", nargs="+", metavar="REV", help=f"a commit, or {THIS!r}")
    args = parser.parse_args(argv)
    return vars(args), args.revs


def measure(
    workload: str, jobs: int, rounds: int, revs: list[str], timeout: float, log: Any = print
) -> dict[str, Any]:
    """Every REV ``rounds`` times, the order rotating; the runs and their summary."""
    if len(set(revs)) != len(revs):
        raise SystemExit("each REV once: the runs are kept by REV")
    head = _before.commit("HEAD")
    commits = {rev: f"{head} + working tree" if rev == THIS else _before.commit(rev)
               for rev in revs}  # fmt: skip
    paths = {rev: _pythonpath(rev) for rev in revs}  # extracted and compiled before any run
    meta: dict[str, Any] = {"workload": workload, "jobs": jobs, "rounds": rounds,
                            "commits": commits}  # fmt: skip
    postmaster = None
    if workload == "W10c8":
        postmaster = find_postmaster()
        meta["postmaster"] = postmaster
        if postmaster is None:
            meta["server"] = "not on this machine: client CPU only"
            log("the server's postmaster is not on this machine: client CPU only")
    runs: dict[str, list[dict[str, Any]]] = {rev: [] for rev in revs}
    for i in range(rounds):
        order = revs[i % len(revs) :] + revs[: i % len(revs)]
        for rev in order:
            result = run_once(workload, jobs, paths[rev], postmaster, timeout)
            runs[rev].append(result)
            log(f"round {i + 1}/{rounds} {rev}: {result}")
    return {"meta": meta, "runs": runs, "summary": summarize(revs, runs, jobs)}


def _print(out: dict[str, Any]) -> None:
    meta = out["meta"]
    print(f"{meta['workload']}, {meta['jobs']:,} jobs, {meta['rounds']} rounds; "
          "median [min, max], (median / first REV's)")  # fmt: skip
    if "server" in meta:
        print(f"server: {meta['server']}")
    for row in out["summary"]:
        sha = meta["commits"][row["rev"]]
        errors = f", {row['errors']} failed" if row["errors"] else ""
        print(f"{row['rev']} ({sha}): {row['runs']} runs{errors}")
        for key, label in (
            ("client_us_per_job", "client µs/job"),
            ("server_us_per_job", "server µs/job"),
            ("total_us_per_job", "total µs/job"),
            ("jobs_per_s", "jobs/s"),
        ):
            f = row.get(key)
            if f is not None:
                print(f"  {label:14} {f['median']:10.1f} [{f['min']:.1f}, {f['max']:.1f}]"
                      f"  ({f['ratio']:.3f}x)")  # fmt: skip


def main(argv: list[str]) -> None:
    options, revs = _parse(argv)
    log = (lambda line: print(line, file=sys.stderr)) if options["json"] else print
    try:
        out = measure(
            options["workload"], options["jobs"], options["runs"], revs, options["timeout"], log
        )
    except RuntimeError as exc:  # a REV that names no commit
        raise SystemExit(str(exc)) from None
    if options["json"]:
        print(json.dumps(out))
    else:
        _print(out)


if __name__ == "__main__":
    main(sys.argv[1:])
