"""The interpreter-exit hook that stops BackgroundSchedulers still running.

When the interpreter begins to exit with a scheduler still running, the hook
stops it as ``shutdown(cancel_running=True)`` would, before any executor's own
exit hook runs, so its worker processes end cleanly and nothing hangs.
"""

from __future__ import annotations

import threading
from typing import Protocol


class Stoppable(Protocol):
    """What the hook stops: a scheduler's event-loop thread."""

    def stop_at_exit(self) -> None:
        """Stop, cancelling what runs; give up after a bounded wait."""


# Loop threads that run, kept alive until they end (as a running thread is),
# so the hook can reach each one.
_live: set[Stoppable] = set()
_live_lock = threading.Lock()
_exit_hook_registered = False


def register(loop: Stoppable) -> None:
    """Stop ``loop`` at exit unless it is unregistered first; installs the hook once."""
    global _exit_hook_registered
    with _live_lock:
        _live.add(loop)
        if not _exit_hook_registered:
            # threading's own exit hook (what concurrent.futures uses), not
            # atexit: it runs as the main thread ends, before every atexit
            # handler. Executors clean up in atexit handlers (the process
            # executor's kills its workers), and those registered after this
            # one would run first, under a scheduler still running.
            install = getattr(threading, "_register_atexit", None)
            if install is None:  # not CPython
                import atexit

                install = atexit.register
            install(_at_exit)
            _exit_hook_registered = True


def unregister(loop: Stoppable) -> None:
    """Its thread has ended: nothing to stop at exit."""
    with _live_lock:
        _live.discard(loop)


def _at_exit() -> None:
    with _live_lock:
        running = list(_live)
    for loop in running:
        loop.stop_at_exit()
