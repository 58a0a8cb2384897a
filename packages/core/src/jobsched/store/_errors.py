"""What a store raises for a value of a job it cannot keep, and the line a
scheduler logs when a store call fails in a way that is nobody's data and no
outage: a bug."""

from __future__ import annotations

#: Where a bug in jobsched (or in a store) is reported, for the one line a
#: scheduler logs before a bug ends it.
REPORT_BUGS = "https://github.com/jobsched/jobsched/issues"


class JobDataError(ValueError):
    """The store cannot keep a value of one of the call's jobs: a text the
    database refuses (NUL, an invalid encoding, a value too long), a string
    the driver cannot encode (a lone surrogate), a result too big to store.

    Raise it from :meth:`JobStore.add` or :meth:`JobStore.record` with
    nothing of the call written (the transaction rolled back). The scheduler
    writes the call's jobs again in halves until the refused one is alone:
    that job fails alone (an outcome is replaced by a FAILED one naming the
    refusal; a new job is refused at ``flush`` and ``enqueue`` with a
    ``ValueError``), and the rest are written. The message says what was
    refused and why, without the value itself.
    """
