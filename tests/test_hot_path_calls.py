"""The memory path costs no more Python calls, and barely more bytecodes, per job.

W1 runs at about 1.45 µs a job on the development machine: one more Python
frame per job is about 5% of it, the most the engine's restructuring (issue
36) may lose, and a paired benchmark on a loaded 2-core machine cannot see 5%
reliably. Counting can: tests/hot_path_probe.py counts, in a fresh
interpreter, the Python calls (``sys.setprofile``) and the bytecode
instructions (``sys.settrace`` opcode events) per job of W1 (no-op jobs) and
W6 (chains of a hundred), submitted and then drained. The figures are the same
on every run and on any load, so this test is not flaky.

The pins are per CPython minor version because bytecode differs between them
(3.12 inlines comprehensions, so W6's submit makes one call fewer from 3.12
on). A version without pins is skipped, with the command that measures it.

Rules: calls per job (in the core, and in the core and anyio together: an
anyio checkpoint per job counts; asyncio's own calls are left out, timing
decides how many its loop makes) must not rise; bytecodes executed in the core per
job must not rise by more than 2% (about 5 instructions of W1's drain: a few
attribute loads). When a change lowers a figure, lower its pin in the same
commit so the gain is kept. Upgrading anyio may move ``calls_anyio``: measure
again and re-pin, saying why in the commit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

#: The probe runs four counted batches per workload; under load it takes a
#: few tens of seconds, more than the suite's default per-test timeout.
pytestmark = pytest.mark.timeout(600)

PROBE = Path(__file__).with_name("hot_path_probe.py")
#: How far bytecodes per job may rise, as a fraction.
BYTECODE_SLACK = 0.02
#: Calls per job are marginal figures over 1,000 jobs, rounded to 1/1000.
CALL_SLACK = 0.0015

Figures = dict[str, dict[str, float]]

#: Measured at 647fa2c (main before issue 36's restructuring) with
#: ``python tests/hot_path_probe.py`` on each CPython under ~/.pyenv.
#: W6 submit on 3.12 and 3.13 was raised from 5.99 to 6.98 calls on purpose
#: (issue 36, step 5b): the memory backing's ``add`` is a frame of its own,
#: which 3.10 and 3.11 pay back by ``_block_on``'s loop replacing a set
#: comprehension (a frame there); 3.12+ inline comprehensions (PEP 709), so
#: there the frame stays: about 50 ns of W6's ~2.3 us a job, W1 unchanged.
W6_SUBMIT_312 = 6.98
#: Lowered after step 7 (JobScheduler composed of parts) where it costs fewer
#: bytecodes: W6 submit on every version, W1 on 3.10. On 3.10 the pin had
#: drifted 6 instructions above W6 submit's figure, enough that one more
#: frame (11 instructions) hid under the 2% slack.
#: W1 submit lowered on 3.11 and 3.13 by issue 37 (E1): the str test of
#: depends_on moved under its truth test, which pays for the test of
#: MARKERS_MADE (3.12 unchanged; 3.10 not measured).
PINNED: dict[tuple[int, int], Figures] = {
    (3, 10): {
        "W1 submit": {"calls_core": 5.0, "calls_anyio": 5.0, "bytecodes_core": 244.0},
        "W1 drain": {"calls_core": 4.03, "calls_anyio": 4.135, "bytecodes_core": 263.15},
        "W6 submit": {
            "calls_core": 6.98,
            "calls_anyio": 6.98,
            "bytecodes_core": 344.98,
        },
        "W6 drain": {"calls_core": 6.01, "calls_anyio": 6.115, "bytecodes_core": 402.92},
    },
    (3, 11): {
        "W1 submit": {"calls_core": 5.0, "calls_anyio": 5.0, "bytecodes_core": 237.0},
        "W1 drain": {"calls_core": 4.03, "calls_anyio": 4.135, "bytecodes_core": 265.24},
        "W6 submit": {
            "calls_core": 6.98,
            "calls_anyio": 6.98,
            "bytecodes_core": 353.85,
        },
        "W6 drain": {"calls_core": 6.01, "calls_anyio": 6.115, "bytecodes_core": 405.01},
    },
    (3, 12): {
        "W1 submit": {"calls_core": 5.0, "calls_anyio": 5.0, "bytecodes_core": 220.0},
        "W1 drain": {"calls_core": 4.03, "calls_anyio": 4.135, "bytecodes_core": 252.24},
        "W6 submit": {
            "calls_core": W6_SUBMIT_312,
            "calls_anyio": W6_SUBMIT_312,
            "bytecodes_core": 323.95,
        },
        "W6 drain": {"calls_core": 6.01, "calls_anyio": 6.115, "bytecodes_core": 381.1},
    },
    (3, 13): {
        "W1 submit": {"calls_core": 5.0, "calls_anyio": 5.0, "bytecodes_core": 224.0},
        "W1 drain": {"calls_core": 4.03, "calls_anyio": 4.135, "bytecodes_core": 261.24},
        "W6 submit": {
            "calls_core": W6_SUBMIT_312,
            "calls_anyio": W6_SUBMIT_312,
            "bytecodes_core": 327.97,
        },
        "W6 drain": {"calls_core": 6.01, "calls_anyio": 6.115, "bytecodes_core": 395.06},
    },
}


def _probe(*flags: str) -> Figures:
    done = subprocess.run(
        [sys.executable, str(PROBE), *flags],
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert tuple(answer["python"]) == sys.version_info[:2]
    return answer["per_job"]  # type: ignore[no-any-return]


def overruns(measured: Figures, pinned: Figures) -> list[str]:
    """Every figure above its allowance, as a readable line."""
    found = []
    for phase, limits in pinned.items():
        for name, pin in limits.items():
            value = measured[phase][name]
            allowed = (
                pin * (1 + BYTECODE_SLACK) if name.startswith("bytecodes") else pin + CALL_SLACK
            )
            if value > allowed:
                found.append(
                    f"{phase} {name}: {value} per job, pinned {pin}, allowed {allowed:.3f}"
                )
    return found


@pytest.fixture(scope="module")
def pinned() -> Figures:
    version = sys.version_info[:2]
    if version not in PINNED:
        pytest.skip(
            f"no pinned figures for Python {version[0]}.{version[1]}: bytecode differs "
            "between minor versions; measure on main with `python tests/hot_path_probe.py` "
            "and add them to PINNED"
        )
    return PINNED[version]


def test_hot_path_calls_and_bytecodes_do_not_rise(pinned: Figures) -> None:
    """W1's and W6's submit and drain cost no more calls per job than pinned,
    and at most 2% more bytecodes."""
    measured = _probe()
    assert set(measured) == set(pinned)
    problems = overruns(measured, pinned)
    assert not problems, (
        "the memory path got dearer per job (tests/hot_path_probe.py --top 12 shows where):\n"
        + "\n".join(problems)
        + f"\nmeasured: {json.dumps(measured)}"
    )


def test_one_more_frame_per_submit_is_caught(pinned: Figures) -> None:
    """The probe sees a single extra Python call on every submit, and the rule
    flags it in both W1 and W6 (calls and bytecodes), not in the drains."""
    measured = _probe("--extra-frame")
    flagged = overruns(measured, pinned)
    assert {line.split(":")[0] for line in flagged} == {
        "W1 submit calls_core",
        "W1 submit calls_anyio",
        "W1 submit bytecodes_core",
        "W6 submit calls_core",
        "W6 submit calls_anyio",
        "W6 submit bytecodes_core",
    }
    for workload in ("W1", "W6"):
        assert measured[f"{workload} submit"]["calls_core"] == pytest.approx(
            pinned[f"{workload} submit"]["calls_core"] + 1, abs=CALL_SLACK
        )


def test_overruns_rule() -> None:
    """Calls may not rise at all; bytecodes may rise by 2% and no more."""
    pin: Figures = {"W1 drain": {"calls_core": 4.0, "bytecodes_core": 100.0}}
    assert overruns({"W1 drain": {"calls_core": 4.0, "bytecodes_core": 102.0}}, pin) == []
    assert overruns({"W1 drain": {"calls_core": 3.0, "bytecodes_core": 50.0}}, pin) == []
    assert overruns({"W1 drain": {"calls_core": 4.01, "bytecodes_core": 100.0}}, pin) == [
        "W1 drain calls_core: 4.01 per job, pinned 4.0, allowed 4.002"
    ]
    assert len(overruns({"W1 drain": {"calls_core": 4.0, "bytecodes_core": 102.1}}, pin)) == 1
