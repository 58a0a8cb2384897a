"""A stored job's call, options and result, shown without unpickling them:
the reader lives in the core (``jobsched.store._peek``), where ``jobsched
show`` reads the same."""

from __future__ import annotations

from jobsched.store._peek import Shown as Shown
from jobsched.store._peek import job as job
from jobsched.store._peek import options as options
from jobsched.store._peek import result as result
from jobsched.store._peek import text as text
