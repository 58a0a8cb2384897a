# ruff: noqa: E501  (scratch scripts of the issue 36 plan, not for merging)
"""Python-level calls per job on the memory path (deterministic, no timing):
the budget each migration step of issue 36 must not exceed.

    .venv/bin/python scratch/plan36/callcount.py [--top N] [--opcodes]

Counts 'call' events of Python functions (sys.setprofile; C calls apart) while
N jobs are submitted (submit phase) and while they run (drain phase), for W1's
no-op jobs and W6's chains, and prints calls per job, engine calls per job, and
the engine functions called most. With --opcodes it counts bytecode
instructions executed in the core instead (sys.settrace, f_trace_opcodes):
extra attribute loads show there, not in the call count.
"""

from __future__ import annotations

import asyncio
import collections
import sys

import jobsched as js

N = 2000
#: --opcodes: count bytecode instructions in the core instead of calls.
OPCODES = "--opcodes" in sys.argv
CHAIN = 100


class Noop(js.AsyncJob):
    async def run(self) -> None:
        return None


def tracing(counter: collections.Counter[str]):
    """Bytecode instructions executed in the core's own code (deterministic)."""

    def trace(frame, event, arg):
        name = frame.f_code.co_filename
        if "/jobsched/" not in name:  # the core only, not the executors or anyio
            return None
        frame.f_trace_opcodes = True
        if event == "opcode":
            counter[name.rsplit("/jobsched/", 1)[-1] + ":" + frame.f_code.co_name] += 1
        return trace

    return trace


def counting(counter: collections.Counter[str]):
    def profile(frame, event, arg):
        if event == "call":
            code = frame.f_code
            counter[f"{code.co_filename.rsplit('/jobsched/', 1)[-1]}:{code.co_name}"] += 1

    return profile


async def measure(kind: str) -> dict[str, collections.Counter[str]]:
    s = js.JobScheduler(num_workers=4)
    # Warm up: executors loaded, first-use imports done.
    async with js.JobScheduler(num_workers=4) as warm:
        warm.submit(Noop("w"))
        await warm.join()
    sub: collections.Counter[str] = collections.Counter()
    hook, install = (tracing, sys.settrace) if OPCODES else (counting, sys.setprofile)
    install(hook(sub))
    if kind == "W1":
        for _ in range(N):
            s.submit(Noop("noop"))
    else:
        for _ in range(N // CHAIN):
            prev = s.submit(Noop("chain"))
            for _ in range(1, CHAIN):
                prev = s.submit(Noop("chain"), depends_on=(prev,))
    install(None)
    run: collections.Counter[str] = collections.Counter()
    install(hook(run))
    await s.start()
    await s.join()
    install(None)
    await s.stop()
    return {"submit": sub, "drain": run}


def main() -> None:
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 0
    for kind in ("W1", "W6"):
        phases = asyncio.run(measure(kind))
        for phase, counter in phases.items():
            total = sum(counter.values())
            # The job's own constructor and run() are the workload's, not the engine's.
            engine = sum(
                v
                for k, v in counter.items()
                if k.startswith(("_engine", "_ordering", "_jobs/_ids", "_jobs/_text", "_state"))
            )
            print(
                f"{kind} {phase:6s}: {total / N:6.2f} {'bytecodes' if OPCODES else 'Python calls'}/job, {engine / N:6.2f} in jobsched"
            )
            for name, count in counter.most_common(top):
                print(f"    {count / N:6.2f}  {name}")


if __name__ == "__main__":
    main()
