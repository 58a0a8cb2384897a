"""jobsched's embedded durable store: jobs in one SQLite file (``sqlite:///jobs.db``)."""

from ._store import SQLiteStore as SQLiteStore

__all__ = ["SQLiteStore"]
