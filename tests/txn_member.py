"""One member for tests/test_complete_in_fleet.py, run as a script (``tests``
on PYTHONPATH): the app of tests/txn_jobs.py on the PostgreSQL store.

``python txn_member.py URL APP_URL TABLE FOLDER [--workers N] [--lease S]``
starts ``txn_jobs.app``'s scheduler on the store at URL, prints ``ready
PID``, then serves one command per line of its standard input, answering
each on one line of its standard output:

- ``submit KIND N``: N jobs (``once``: ``txn.exactly_once``; ``held``:
  ``txn.held``), tagged 0 to N-1, writing to TABLE through APP_URL;
  committed; answers their ids, space-separated.
- ``join``: waits until no job in the store is unfinished; answers ``joined``.

At the end of its input it stops and exits 0. Its WARNINGs and worse go to
stderr (``LEVEL logger: message``).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

import anyio
import anyio.to_thread
import txn_jobs

import jobsched as js

SECRET = "txn-test-secret"


async def serve(s: js.JobScheduler, args: argparse.Namespace) -> None:
    while line := await anyio.to_thread.run_sync(sys.stdin.readline):
        command, *rest = line.split()
        if command == "submit":
            kind, count = rest
            function = {"once": txn_jobs.exactly_once, "held": txn_jobs.held}[kind]
            extra = (args.folder,) if kind == "held" else ()
            ids = [
                s.submit(function.job(args.app_url, args.table, str(i), *extra))
                for i in range(int(count))
            ]
            await s.flush()
            answer = " ".join(ids)
        elif command == "join":
            await s.join()
            answer = "joined"
        else:
            answer = f"unknown command {command!r}"
        print(answer, flush=True)


async def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    for name in ("url", "app_url", "table", "folder"):
        parser.add_argument(name)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--lease", type=float, default=30.0)
    args = parser.parse_args(argv)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.WARNING)
    logging.getLogger().addHandler(handler)
    store = js.open_store(args.url, secret=SECRET, lease=args.lease)
    async with txn_jobs.app.scheduler(store=store, num_workers=args.workers) as s:
        print(f"ready {os.getpid()}", flush=True)
        await serve(s, args)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
