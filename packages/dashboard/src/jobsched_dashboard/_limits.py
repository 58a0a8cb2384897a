"""How much one request reads or changes at most, and the page's other numbers.

Every read is paged by these, so a page costs the same on a store holding a
million finished jobs as on an empty one. Read at call time (``_limits.X``),
so a test may lower one.
"""

from __future__ import annotations

from jobsched import JobStatus
from jobsched.store import MEMBER_EVERY

#: Seconds of history the chart and the timeline show (``?minutes=`` changes it).
WINDOW = 300.0
#: The ``minutes`` a page may ask for.
MINUTES = range(1, 61)
#: Attempts read for the chart and the timeline: the newest, when more fall in the
#: window. A 900-unit timeline shows no more bars usefully, and each costs the
#: page about 0.1 ms to render (W14 in benchmarks/).
ATTEMPTS_LIMIT = 1_000
#: Waiting jobs read for the queue (the newest), failures for their list.
WAITING_LIMIT = 200
FAILURES_LIMIT = 25
#: Jobs a page of the job list shows, and the most it looks at to find them
#: (``JobStore.job_page``): a page costs the same on any history.
PAGE_LIMIT = 50
PAGE_SCAN = 1_000
#: A bulk retry or cancel acts on at most this many jobs per request, and
#: looks at no more than ``BULK_PAGES`` pages of ``PAGE_SCAN`` to find them;
#: the page says when more are left (press again).
BULK_LIMIT = 1_000
BULK_PAGES = 20
#: The statuses each bulk action applies to (others in the filter are ignored).
UNFINISHED = (JobStatus.PENDING, JobStatus.RETRY_WAIT, JobStatus.RUNNING)
#: Members listed (the most recently seen), and after how many missed
#: reports one is marked stale.
MEMBERS_LIMIT = 200
STALE_AFTER = 3 * MEMBER_EVERY
#: Upstream jobs fetched to tell what blocked jobs wait on.
UPSTREAMS_LIMIT = 100
#: The page's script refreshes its live part this often (milliseconds).
REFRESH_MS = 2_000
#: The most bytes an action's form may have (the page sends about 50): a
#: larger body is refused with 413 before more of it is read.
MAX_BODY = 16_384

#: Fires a schedule's page lists (its latest).
FIRES_LIMIT = 50

#: Workflows a page of the workflow list shows (the newest), and the most
#: jobs a workflow's page reads and draws (the first by id).
WORKFLOWS_LIMIT = 50
GRAPH_LIMIT = 2_000
#: A workflow's page past ``_graph.FOLD_PAST`` jobs refreshes this many times slower.
BIG_GRAPH_SLOWER = 5
