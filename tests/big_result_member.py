"""A member that runs one job with a big result, then prints how far its
peak memory rose over what it held before, as a multiple of the result
(tests/test_big_results.py runs it in a process of its own).

Usage: python big_result_member.py STORE_URL SIZE
"""

from __future__ import annotations

import os
import resource
import sys
from typing import Any

import anyio

import jobsched as js

#: The result's size in bytes (the command line's).
SIZE = 0
#: Gated jobs wait for these (made by the test, on its loop).
GATES: dict[str, anyio.Event] = {}


class Gated(js.AsyncJob):
    """Returns ``size`` bytes (or its key) once the test opens its gate."""

    def __init__(self, key: str, size: int = 0) -> None:
        super().__init__(f"gated {key}")
        self.key = key
        self.size = size

    async def run(self) -> Any:
        await GATES[self.key].wait()
        return b"x" * self.size if self.size else self.key


def resident() -> int:
    """Bytes resident now (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak() -> int:
    """The most bytes resident since the last :func:`reset_peak` (VmHWM, in KiB)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def reset_peak() -> None:
    """Start the peak afresh (Linux's clear_refs 5): the warm-up's own peak,
    which a loaded machine's thread stacks and allocator arenas can push far
    above what stays resident, must not count as the job's or hide it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


async def big(size: int) -> bytes:
    return b"x" * size


async def small() -> int:
    return 1


async def main(url: str) -> None:
    from big_result_member import big, small  # by reference, not __main__'s

    async with js.JobScheduler(store=js.open_store(url, secret="big-results")) as s:
        # Warm up first: the executor, the store's statements and threads.
        await s.result(await s.enqueue(js.FunctionJob(small)))
        reset_peak()
        base = resident()
        before = peak()
        done = anyio.Event()
        s.add_listener(lambda job, old, new: new.is_terminal and done.set())
        job_id = await s.enqueue(js.FunctionJob(big, (SIZE,)))
        await done.wait()
        await s.flush()  # the result is written
        assert s.get(job_id).status is js.JobStatus.COMPLETED
    print(f"{(peak() - base) / SIZE:.2f} {before / 1e6:.0f} {base / 1e6:.0f}")


if __name__ == "__main__":
    SIZE = int(sys.argv[2])
    anyio.run(main, sys.argv[1])
