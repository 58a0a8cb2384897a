"""A fleet member for the chaos tests: tests/fleet_member.py, with its wall
clock optionally ahead, and the store's outage lines logged.

``python chaos_member.py SECONDS URL LOG [fleet_member's flags]``: the
process's ``time.time`` (and ``time_ns``) read ``SECONDS`` ahead of the
machine's, patched before jobsched is imported, so every default that
captured the function sees the skew (the tests' clock patch: nothing in the
library knows it). Every WARNING and above goes to stderr, and the INFO
line that says the store is back.
"""

from __future__ import annotations

import logging
import runpy
import sys
import time
from pathlib import Path

ahead = float(sys.argv.pop(1))
if ahead:
    _time, _time_ns = time.time, time.time_ns
    time.time = lambda: _time() + ahead
    time.time_ns = lambda: _time_ns() + int(ahead * 1e9)


def _wanted(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.WARNING or str(record.msg).startswith("the store ")


handler = logging.StreamHandler(sys.stderr)
handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
handler.addFilter(_wanted)
logging.getLogger().addHandler(handler)
logging.getLogger("jobsched").setLevel(logging.INFO)

sys.argv[0] = str(Path(__file__).with_name("fleet_member.py"))
runpy.run_path(sys.argv[0], run_name="__main__")
