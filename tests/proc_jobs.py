"""Jobs for the process executor tests, importable by name in worker processes.

Worker processes import this module through the ``sys.path`` the executor
hands them (pytest puts ``tests/`` on it), so it must stay light: no pytest.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, NoReturn

import jobsched as js


class Square(js.CpuBoundJob):
    def __init__(self, value: int, **kw: Any) -> None:
        super().__init__(kw.pop("name", f"square {value}"), **kw)
        self.value = value

    def run_sync(self) -> int:
        return self.value * self.value


class SpinForever(js.CpuBoundJob):
    """Writes its pid to ``pid_file``, then burns CPU until it is killed."""

    def __init__(self, pid_file: Path, *, ignore_sigterm: bool = False, **kw: Any) -> None:
        super().__init__("spin", **kw)
        self.pid_file = pid_file
        self.ignore_sigterm = ignore_sigterm

    def run_sync(self) -> NoReturn:
        if self.ignore_sigterm:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _write_pid(self.pid_file)
        while True:
            pass


class WaitForFile(js.CpuBoundJob):
    """Writes its pid to ``pid_file``, then returns it once ``release`` exists."""

    def __init__(self, pid_file: Path, release: Path, **kw: Any) -> None:
        super().__init__("wait for file", **kw)
        self.pid_file = pid_file
        self.release = release

    def run_sync(self) -> int:
        _write_pid(self.pid_file)
        while not self.release.exists():
            time.sleep(0.005)
        return os.getpid()


def _write_pid(path: Path) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(str(os.getpid()))
    os.replace(tmp, path)  # the test never reads half a pid


class ExitUntilAttempt(js.CpuBoundJob):
    """Kills its worker with ``os._exit(3)`` until attempt ``succeed_on``."""

    def __init__(self, succeed_on: int, **kw: Any) -> None:
        super().__init__("exit until", **kw)
        self.succeed_on = succeed_on

    def run_sync(self) -> str:
        # `attempts` travels with the job: the scheduler counts before sending.
        if self.attempts < self.succeed_on:
            os._exit(3)
        return f"ok on attempt {self.attempts}"


def getpid() -> int:
    return os.getpid()


def exit_with_3() -> NoReturn:
    os._exit(3)


def sigkill_self() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def segfault() -> None:
    ctypes.string_at(0)


def raise_value_error() -> NoReturn:
    raise ValueError("boom")


def raise_non_retryable() -> NoReturn:
    raise js.NonRetryableError("give up")


def call_sys_exit() -> NoReturn:
    sys.exit(3)


def raise_keyboard_interrupt() -> NoReturn:
    raise KeyboardInterrupt(3)


def raise_generator_exit() -> NoReturn:
    raise GeneratorExit(3)


def raise_cancelled_error() -> NoReturn:
    import asyncio

    raise asyncio.CancelledError("not ours")


def return_lock() -> threading.Lock:
    return threading.Lock()


class TwoArgError(Exception):
    """Pickles, but cannot be unpickled: its args are the formatted message."""

    def __init__(self, a: int, b: int) -> None:
        super().__init__(f"{a} and {b}")


def raise_two_arg_error() -> NoReturn:
    raise TwoArgError(1, 2)


def _fail_on_load() -> NoReturn:
    raise RuntimeError("this object cannot be loaded")


class LoadsBadly:
    """Pickles fine in the parent; unpickling it (in the worker) raises."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_fail_on_load, ())


def spawn_sleep_then_spin(pid_file: Path) -> NoReturn:
    """Starts ``sleep 60``, writes its pid to ``pid_file``, then burns CPU until killed."""
    child = subprocess.Popen(["sleep", "60"])
    tmp = pid_file.with_suffix(".tmp")
    tmp.write_text(str(child.pid))
    os.replace(tmp, pid_file)
    while True:
        pass


def spawn_sleep() -> int:
    """Starts ``sleep 60`` in the background and returns its pid."""
    return subprocess.Popen(["sleep", "60"]).pid


def length(data: bytes) -> int:
    return len(data)


def echo(value: Any) -> Any:
    return value


def big_result(size: int) -> tuple[bytes, LoadRecorder]:
    return b"r" * size, LoadRecorder()


def big_unloadable_result(size: int) -> tuple[bytes, LoadsBadly]:
    return b"r" * size, LoadsBadly()


#: Names of the threads that loaded a LoadRecorder in this process.
LOADED_IN: list[str] = []
#: Names of the threads that pickled a SlowToPickle in this process.
PICKLED_IN: list[str] = []


def _loaded() -> str:
    LOADED_IN.append(threading.current_thread().name)
    return "loaded"


class LoadRecorder:
    """Records, when unpickled, which thread of the loading process did it."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_loaded, ())


class SlowToPickle:
    """Takes 50 ms to pickle (past any budget for the event loop); records the thread."""

    def __reduce__(self) -> tuple[Any, ...]:
        time.sleep(0.05)
        PICKLED_IN.append(threading.current_thread().name)
        return (str, ("slow",))
