"""Count the Python calls and bytecodes the memory path costs per job.

Run by tests/test_hot_path_calls.py in a fresh interpreter (``python
tests/hot_path_probe.py``; it prints one JSON object), and by hand to see where
the calls go (``--top 12``). Counting, not timing: ``sys.setprofile`` sees every
Python function call, ``sys.settrace`` with ``f_trace_opcodes`` every bytecode
instruction executed, so the figures are the same on every run and on a loaded
machine, where a paired benchmark's ratio moves by more than the 5% the engine
may lose (docs/design/engine-parts-plan.md, section 4).

Per-job figures are marginal: each phase runs with two batch sizes and the
difference is divided by the difference in jobs, so a fixed cost (starting the
workers, the last join) does not count as a per-job cost, and the figure is the
same whatever the batch size.

Workloads are those of the benchmark suite, without timing: W1 (no-op jobs on
four workers) and W6 (chains of one hundred, each job depending on the last).
Phases: *submit* (the jobs submitted to a scheduler not yet started) and
*drain* (started, then joined until every job has run).
"""

from __future__ import annotations

import asyncio
import collections
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import anyio

import jobsched as js

#: The two batch sizes whose difference gives the per-job figures.
SIZES = (400, 1400)
#: W6's chain length (the benchmark's).
CHAIN = 100
#: Where the core's code lives: calls and bytecodes there are the engine's.
CORE = str(Path(js.__file__).resolve().parent) + "/"
#: anyio's code: the event loop's own (asyncio's) is left out, its calls per
#: job depend on how the selector's timeouts fall, which timing decides.
ANYIO = str(Path(anyio.__file__).resolve().parent) + "/"


class Noop(js.AsyncJob):
    """W1's and W6's job: nothing to do."""

    async def run(self) -> None:
        return None


Counts = dict[str, "collections.Counter[str]"]
Tracer = Callable[[FrameType, str, Any], Any]


def _where(frame: FrameType) -> str:
    code = frame.f_code
    return f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_name}"


def _profiler(counts: Counts) -> Tracer:
    """Count calls of Python functions: in the core, and all of them."""

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            filename = frame.f_code.co_filename
            if filename.startswith(CORE):
                counts["calls_core"][_where(frame)] += 1
                counts["calls_anyio"][_where(frame)] += 1
            elif filename.startswith(ANYIO):
                counts["calls_anyio"][_where(frame)] += 1

    return profile


def _tracer(counts: Counts) -> Tracer:
    """Count bytecode instructions executed in the core's own functions."""

    def trace(frame: FrameType, event: str, arg: Any) -> Tracer | None:
        if not frame.f_code.co_filename.startswith(CORE):
            return None
        frame.f_trace_opcodes = True
        if event == "opcode":
            counts["bytecodes_core"][_where(frame)] += 1
        return trace

    return trace


async def _run(kind: str, jobs: int, counting: str) -> Counts:
    """One batch of ``jobs`` of workload ``kind``, counted phase by phase."""
    # Warm up: the executor loaded and every first-use import done, so the
    # counted batches see only the steady state.
    async with js.JobScheduler(num_workers=4) as warm:
        warm.submit(Noop("w"))
        await warm.join()
    scheduler = js.JobScheduler(num_workers=4)
    submit: Counts = collections.defaultdict(collections.Counter)
    drain: Counts = collections.defaultdict(collections.Counter)
    # The jobs are built before counting starts: their constructors are the
    # workload's cost, not the engine's.
    batch = [Noop(kind) for _ in range(jobs)]
    if counting == "calls":
        sys.setprofile(_profiler(submit))
    else:
        sys.settrace(_tracer(submit))
    if kind == "W1":
        for job in batch:
            scheduler.submit(job)
    else:
        previous = None
        for number, job in enumerate(batch):
            if number % CHAIN == 0:
                previous = scheduler.submit(job)
            else:
                previous = scheduler.submit(job, depends_on=(previous,))
    sys.setprofile(None)
    sys.settrace(None)
    if counting == "calls":
        sys.setprofile(_profiler(drain))
    else:
        sys.settrace(_tracer(drain))
    await scheduler.start()
    await scheduler.join()
    sys.setprofile(None)
    sys.settrace(None)
    await scheduler.stop()
    return {"submit": submit, "drain": drain}


def measure() -> dict[str, dict[str, float]]:
    """``{"W1 submit": {"calls_core": 5.0, ...}, ...}``: per-job figures."""
    small, large = SIZES
    # Python 3.12's sys.settrace (rebuilt on sys.monitoring) missed every event
    # of the first traced batch's submit phase here, code that had already run
    # untraced: one batch of each kind of counting is run and thrown away.
    for counting in ("calls", "bytecodes"):
        asyncio.run(_run("W6", CHAIN, counting))
    out: dict[str, dict[str, float]] = {}
    for kind in ("W1", "W6"):
        batches: dict[int, Counts] = {}
        for jobs in SIZES:
            merged: Counts = {}
            for counting in ("calls", "bytecodes"):
                for phase, counts in asyncio.run(_run(kind, jobs, counting)).items():
                    for measure_name, counter in counts.items():
                        merged[f"{phase} {measure_name}"] = counter
            batches[jobs] = merged
        for key in sorted(batches[large]):
            phase, measure_name = key.split(" ")
            extra = sum(batches[large][key].values()) - sum(batches[small][key].values())
            out.setdefault(f"{kind} {phase}", {})[measure_name] = round(extra / (large - small), 3)
    return out


def where(top: int) -> None:
    """Print the core functions called most per job, phase by phase."""
    jobs = SIZES[1]
    for kind in ("W1", "W6"):
        for phase, counts in asyncio.run(_run(kind, jobs, "calls")).items():
            print(f"{kind} {phase}:")
            for name, count in counts["calls_core"].most_common(top):
                print(f"    {count / jobs:7.3f}  {name}")


def add_a_frame() -> None:
    """Put one more Python call, in the core, on every submit: the probe's own
    check that a new frame on the hot path shows (tests/test_hot_path_calls.py).
    The wrapper is compiled under a file name inside the core, as the engine's
    own code would be."""
    source = "def submit(self, *args, **kwargs):\n    return inner(self, *args, **kwargs)\n"
    space: dict[str, Any] = {"inner": js.JobScheduler.submit}
    exec(compile(source, CORE + "_probe_extra_frame.py", "exec"), space)
    js.JobScheduler.submit = space["submit"]  # type: ignore[method-assign]


if __name__ == "__main__":
    if "--extra-frame" in sys.argv:
        add_a_frame()
    if "--top" in sys.argv:
        where(int(sys.argv[sys.argv.index("--top") + 1]))
    else:
        print(json.dumps({"python": list(sys.version_info[:2]), "per_job": measure()}))
