"""`import jobsched` stays cheap: no subprocess, no cron parser, until a trigger is built.

How long the import takes is measured in the benchmark suite (W0), as a ratio
to `import anyio`; these tests pin down what must never happen at import.
"""

from __future__ import annotations

import json
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
                  "click": "click" in sys.modules}))
"""


def _probe(code: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.replace("CODE", code)],
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
    """`import jobsched` and reading its public names start no process and skip
    croniter and click (the console script's)."""
    seen = _probe("import jobsched\nfor n in jobsched.__all__: getattr(jobsched, n)")
    assert seen == {"started": [], "croniter": False, "click": False}


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
