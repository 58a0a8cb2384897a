"""The driver's own log records, folded into the scheduler's outage.

psycopg's pool logs a WARNING for every connection it discards and every
reconnection attempt (51 lines in a 40 s outage), and psycopg one for every
pipeline a failed statement aborted (a claim's, per retry) and every
rollback a dead connection could not send. The scheduler
already says an outage once when it starts and once when it ends; their
records made for this store (in its pools' threads, or in a store call) are
dropped below ERROR. Other pools and connections of the process log as before.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator

#: The name of the store's pools, and the prefix of their threads' names.
POOL_NAME = "jobsched"
_LOGGERS = ("psycopg", "psycopg.pool", "psycopg.transaction")

_inside = threading.local()


class Fold(logging.Filter):
    """Drops the driver's records below ERROR made for this store."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR:
            return True
        if getattr(_inside, "call", False):
            return False
        return not (record.threadName or "").startswith(POOL_NAME + "-")


FOLD = Fold()


def install() -> None:
    """Fold the driver's records (once per process: a filter is added once).

    On each of psycopg's loggers (those it made by now, its modules being
    imported): a logger's filters see only the records made on it, not its
    children's."""
    made = logging.Logger.manager.loggerDict
    for name in {*_LOGGERS, *(n for n in made if n.startswith("psycopg."))}:
        logging.getLogger(name).addFilter(FOLD)


@contextlib.contextmanager
def store_call() -> Iterator[None]:
    """Mark the calling thread as in a store call while the block runs."""
    outer = getattr(_inside, "call", False)
    _inside.call = True
    try:
        yield
    finally:
        _inside.call = outer
