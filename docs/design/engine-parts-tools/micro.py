# ruff: noqa
"""Micro-benchmarks behind the plan's hot-path figures: today's _finish_one memory path
against the composed shape (ABAB pairs), and a ContextVar set+reset per attempt.
    python3 scratch/plan36/micro.py
"""

import contextvars
import statistics
import timeit
from collections import deque


class Status:
    _terminal = False


class Done:
    _terminal = True


RUN, COMPLETED = Status(), Done()


class Job:
    __slots__ = ("status", "finished_at", "_jobsched_id", "last_error")

    def __init__(self, n):
        self.status = RUN
        self._jobsched_id = n
        self.finished_at = None


class Tower:
    def __init__(self):
        self._link = None
        self._clock = lambda: 1.0
        self._listeners = []
        self._unfinished = 10**9
        self._join_waiters = []
        self._outcome_waiters = {}
        self._blocked = {}
        self._dependents = {}
        self._finished = deque()
        self._history_limit = 100
        self._jobs = {}

    def _transition(self, job, new):
        job.status = new
        if self._listeners:
            pass

    def _finish_one(self, job, status, error, now=None):
        if job.status._terminal:
            return None
        try:
            if self._link is not None:
                pass
            if now is None:
                now = self._clock()
            job.finished_at = now
            self._transition(job, status)
        except Exception:
            return None
        self._unfinished -= 1
        if not self._unfinished and self._join_waiters:
            pass
        number = job._jobsched_id
        if self._outcome_waiters:
            pass
        if self._blocked:
            self._blocked.pop(number, None)
        cascade = None
        if self._dependents:
            pass
        finished = self._finished
        finished.append(number)
        if len(finished) > self._history_limit:
            self._jobs.pop(finished.popleft(), None)
        return cascade


class Table:
    __slots__ = (
        "jobs",
        "unfinished",
        "finished",
        "history_limit",
        "join_waiters",
        "outcome_waiters",
        "listeners",
    )

    def __init__(self):
        self.jobs = {}
        self.unfinished = 10**9
        self.finished = deque()
        self.history_limit = 100
        self.join_waiters = []
        self.outcome_waiters = {}
        self.listeners = []

    def transition(self, job, new):
        job.status = new
        if self.listeners:
            pass


class Outcomes:
    __slots__ = ("_table", "_clock", "_transition", "_blocked", "_dependents")

    def __init__(self, table):
        self._table = table
        self._clock = lambda: 1.0
        self._transition = table.transition
        self._blocked = {}
        self._dependents = {}

    def finish_one(self, job, status, error, now=None):
        if job.status._terminal:
            return None
        try:
            if now is None:
                now = self._clock()
            job.finished_at = now
            self._transition(job, status)
        except Exception:
            return None
        table = self._table
        table.unfinished -= 1
        if not table.unfinished and table.join_waiters:
            pass
        number = job._jobsched_id
        if table.outcome_waiters:
            pass
        if self._blocked:
            self._blocked.pop(number, None)
        cascade = None
        if self._dependents:
            pass
        finished = table.finished
        finished.append(number)
        if len(finished) > table.history_limit:
            table.jobs.pop(finished.popleft(), None)
        return cascade


t = Tower()
o = Outcomes(Table())
jobs = [Job(i) for i in range(1000)]


def run_tower():
    f = t._finish_one
    for j in jobs:
        j.status = RUN
        f(j, COMPLETED, None, 1.0)


def run_parts():
    f = o.finish_one
    for j in jobs:
        j.status = RUN
        f(j, COMPLETED, None, 1.0)


for _ in range(3):
    a = min(timeit.repeat(run_tower, number=200, repeat=9)) / 200e3 * 1e9
    b = min(timeit.repeat(run_parts, number=200, repeat=9)) / 200e3 * 1e9
    print(f"tower {a:6.1f} ns/job   parts {b:6.1f} ns/job   parts/tower {b / a:.3f}")
import statistics

ratios = []
for _ in range(25):
    a = min(timeit.repeat(run_tower, number=50, repeat=3))
    b = min(timeit.repeat(run_parts, number=50, repeat=3))
    ratios.append(b / a)
print(
    "median parts/tower over 25 ABAB pairs:",
    round(statistics.median(ratios), 3),
    "quartiles",
    [round(q, 3) for q in statistics.quantiles(ratios, n=4)],
)

cv = contextvars.ContextVar("x", default=None)


class W:
    __slots__ = ("current",)


w = W()


def set_reset():
    t = cv.set(1)
    cv.reset(t)


def two_stores():
    w.current = 1
    w.current = None


def empty():
    pass


def ns(fn):
    return statistics.median(
        min(timeit.repeat(fn, number=200_000, repeat=5)) / 200_000 * 1e9 for _ in range(5)
    )


e = ns(empty)
print(
    f"ContextVar set+reset: {ns(set_reset) - e:.0f} ns; two attribute stores: {ns(two_stores) - e:.0f} ns"
)


def opcodes(fn, *args):
    """Bytecode instructions executed by one call (deterministic, no timing)."""
    import sys

    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        frame.f_trace_opcodes = True
        if event == "opcode":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        fn(*args)
    finally:
        sys.settrace(None)
    return count


job = Job(0)
job.status = RUN
a = opcodes(t._finish_one, job, COMPLETED, None, 1.0)
job.status = RUN
b = opcodes(o.finish_one, job, COMPLETED, None, 1.0)
print(f"bytecodes per finish_one: tower {a}, parts {b}")
