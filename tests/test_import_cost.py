"""`import jobsched` stays cheap: no subprocess, no cron parser until a trigger
is built, no store seam until a durable store is used.

How long the import takes is measured in the benchmark suite (W0), as a ratio
to `import anyio`, and by :func:`paired_import_ratio` here (run this file as a
script for the figure); these tests pin down what must never happen at import,
and which modules must not load, rather than time it on a shared machine.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

# Runs in a fresh interpreter: an audit hook records every way of starting a
# process (Popen, posix_spawn, fork, exec, system) from then on, then the
# code under test runs, and the events and modules seen are printed as JSON.
_PROBE = """
import json, sys
started = []
PROCESS_EVENTS = {"subprocess.Popen", "os.posix_spawn", "os.exec", "os.fork",
                  "os.forkpty", "os.spawn", "os.system", "os.startfile"}
def hook(event, args):
    if event in PROCESS_EVENTS:
        started.append([event, repr(args)[:200]])
sys.addaudithook(hook)
CODE
print(json.dumps({"started": started, "croniter": "croniter" in sys.modules,
                  "click": "click" in sys.modules,
                  "store": sorted(m for m in sys.modules
                                  if m.split(".")[:2] == ["jobsched", "store"]),
                  "loaded": sorted(m for m in LAZY if m in sys.modules)}))
"""

#: Modules only a durable store needs: the store seam (``jobsched.store``:
#: JobStore, its row dataclasses, the URL registry), the store link and what
#: it brings, the codec (hashlib, hmac, pickle) and the members module
#: (socket). Issue 22 found them loaded by a bare import, which had doubled its
#: cost; issue 23 found the seam's dataclasses a third of it. (The probe's
#: "store" lists every ``jobsched.store.*`` module loaded, named here or not.)
LAZY = (
    "jobsched._engine._link",
    "jobsched._engine._linkhost",
    "jobsched.store",
    "jobsched.store._args",
    "jobsched.store._base",
    "jobsched.store._registry",
    "jobsched.store._codec",
    "jobsched.store._members",
    "hashlib",
    "hmac",
    "pickle",
    "socket",
)


def _probe(code: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", f"LAZY = {LAZY!r}\n" + _PROBE.replace("CODE", code)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_probe_sees_a_subprocess() -> None:
    """The probe itself works: a subprocess started by the code is recorded."""
    seen = _probe("import subprocess; subprocess.run(['true'])")
    assert [event for event, _ in seen["started"]] == ["subprocess.Popen"]  # type: ignore[union-attr]


def test_import_starts_no_subprocess_and_no_cron_parser() -> None:
    """`import jobsched` starts no process and skips croniter, click (the
    console script's) and every store module; reading its public names starts no
    process and skips croniter and click."""
    seen = _probe("import jobsched")
    assert seen == {"started": [], "croniter": False, "click": False, "store": [], "loaded": []}
    seen = _probe("import jobsched\nfor n in jobsched.__all__: getattr(jobsched, n)")
    assert seen["started"] == [] and not seen["croniter"] and not seen["click"]


def test_the_store_seam_loads_when_its_names_are_read() -> None:
    """`jobsched.JobStore` and `jobsched.open_store` are the seam's, loaded on
    first use; the codec and the members module still wait for a durable store."""
    seen = _probe(
        "import jobsched\n"
        "from jobsched.store._base import JobStore\n"
        "assert jobsched.JobStore is JobStore\n"
        "from jobsched.store._registry import open_store\n"
        "assert jobsched.open_store is open_store\n"
    )
    assert seen["store"] == [
        "jobsched.store",
        "jobsched.store._args",
        "jobsched.store._base",
        "jobsched.store._errors",
        "jobsched.store._flowrows",
        "jobsched.store._handback",
        "jobsched.store._joined",
        "jobsched.store._operator",
        "jobsched.store._registry",
        "jobsched.store._rows",
        "jobsched.store._urls",
        "jobsched.store._waitreads",
        "jobsched.store._workflowside",
    ]
    assert [m for m in seen["loaded"] if not m.startswith("jobsched.store")] == []


def test_an_in_memory_scheduler_loads_no_store_module() -> None:
    """A scheduler on the in-memory store running a job leaves the store seam
    (every ``jobsched.store`` module), the store link, the codec, the members
    module, hashlib, hmac and pickle unloaded: only a durable store pays for
    them."""
    seen = _probe(
        "import anyio, jobsched as js\n"
        "async def main():\n"
        "    async with js.JobScheduler() as s:\n"
        "        job_id = s.submit(js.FunctionJob(len, args=('abc',)))\n"
        "        assert await s.result(job_id) == 3\n"
        "anyio.run(main)\n"
    )
    # asyncio (the event loop anyio.run starts) imports socket itself.
    assert [m for m in seen["loaded"] if m != "socket"] == []
    assert seen["store"] == []


def test_a_background_scheduler_in_memory_loads_no_store_module() -> None:
    """The same for the sync facade: its loop thread runs a job on the memory
    store without loading the store seam or the link."""
    seen = _probe(
        "import jobsched as js\n"
        "with js.BackgroundScheduler() as s:\n"
        "    assert s.result(s.submit(js.FunctionJob(len, args=('abc',))), timeout=60) == 3\n"
    )
    assert [m for m in seen["loaded"] if m != "socket"] == []
    assert seen["store"] == []


def test_a_durable_store_loads_them_when_first_used(tmp_path: object) -> None:
    """The probe sees those modules once a scheduler on SQLite is built: the
    bound above is on what a bare import loads, not on what works."""
    seen = _probe(
        "import anyio, jobsched as js\n"
        "assert 'jobsched._engine._link' not in sys.modules\n"
        "async def main():\n"
        f"    async with js.JobScheduler(store='sqlite:///{tmp_path}/jobs.db') as s:\n"
        "        job_id = s.submit(js.FunctionJob(len, args=('abc',)))\n"
        "        assert await s.result(job_id) == 3\n"
        "anyio.run(main)\n"
    )
    assert seen["loaded"] == sorted(LAZY)


def test_the_console_script_imports_click() -> None:
    """The probe would see click: the CLI's package imports it."""
    assert _probe("import jobsched._cli")["click"] is True


def test_croniter_is_imported_when_a_trigger_is_built() -> None:
    """Building a CronTrigger is what imports croniter, and it then works."""
    seen = _probe(
        "import jobsched, datetime\n"
        "t = jobsched.CronTrigger('@daily', 'UTC')\n"
        "d = datetime.datetime(2026, 1, 1, 12, tzinfo=datetime.timezone.utc)\n"
        "assert t.next_after(d).isoformat() == '2026-01-02T00:00:00+00:00', t.next_after(d)\n"
    )
    assert seen["croniter"] is True


# Times `import X` in a fresh interpreter, as a user's first import does
# (whole process: nothing imported before it but what `python -c` loads).
_TIMED = "import time\nt0 = time.perf_counter()\nimport {0}\nprint(time.perf_counter() - t0)\n"


def _import_seconds(package: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", _TIMED.format(package)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        # A user's imports load .pyc files; compiling from source would swamp the figure.
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    )
    return float(done.stdout.strip().splitlines()[-1])


def paired_import_ratio(runs: int) -> float:
    """The median over ``runs`` pairs of fresh interpreters of ``import jobsched``
    time over ``import anyio`` time, each pair run back to back so that both
    halves see the same load on a shared machine."""
    _import_seconds("anyio"), _import_seconds("jobsched")  # untimed: write the caches
    ratios = []
    for _ in range(runs):
        anyio_s = _import_seconds("anyio")
        ratios.append(_import_seconds("jobsched") / anyio_s)
    return statistics.median(ratios)


def test_paired_import_ratio_measures() -> None:
    """The measurement runs and gives a ratio (its value is the benchmark's and
    this script's business: a timed assertion would fail on a loaded machine)."""
    ratio = paired_import_ratio(2)
    assert 0 < ratio < float("inf")


if __name__ == "__main__":
    print(
        f"import jobsched / import anyio, median of 15 paired runs: {paired_import_ratio(15):.2f}x"
    )
