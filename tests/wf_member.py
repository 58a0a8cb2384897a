"""One member for tests/test_workflow_members.py, run as a script (``tests``
on PYTHONPATH): ``python wf_member.py URL QUEUE`` runs
tests/wf_member_jobs.py's app on the PostgreSQL store at URL, claiming only
from QUEUE, prints ``ready PID``, and stops cleanly (exit 0) at the end of
its standard input.
"""

from __future__ import annotations

import os
import sys

import anyio
import anyio.to_thread
import wf_member_jobs
from pg import SECRET

import jobsched as js


async def main(url: str, queue: str) -> None:
    store = js.open_store(url, secret=SECRET)
    async with wf_member_jobs.app.scheduler(store=store, queues=[queue], num_workers=4):
        print(f"ready {os.getpid()}", flush=True)
        await anyio.to_thread.run_sync(sys.stdin.read)


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:])
