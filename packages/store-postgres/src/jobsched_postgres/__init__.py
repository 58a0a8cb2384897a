"""jobsched's fleet store: jobs in PostgreSQL (``postgresql://user@host:5432/db``)."""

from ._store import PostgresStore as PostgresStore

__all__ = ["PostgresStore"]
