"""The jobsched benchmark suite: jobsched against plain asyncio and APScheduler 4.

Run it with ``uv run --group bench python -m benchmarks`` (``--help`` lists the
flags). The parent process (:mod:`benchmarks._suite`) runs every measurement in
a fresh child process (:mod:`benchmarks._child`), alternating systems within
each repetition, and reports each figure as a ratio against ``raw`` measured in
the same repetition: median, min and max over the repetitions.

One module per system (``_raw``, ``_jobsched``, ``_apscheduler4``) implements
the workloads of :mod:`benchmarks._workloads` the way a user of that system
would write them; ``_work`` holds the job bodies they share. ``_dask`` holds
W13 (Dask alone against jobsched's ``dask`` executor) whole, run as its own child.
``_stores`` holds W7-W9 (the SQLite store against a hand-written ``sqlite3``
loop; APScheduler 4 and huey in ``_stores_others``), run as its own child too.
"""
