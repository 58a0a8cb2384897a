"""Jobs: what to run and how it runs.

The job classes (``_job``), jobs made from plain callables (``_function``),
the form a durable store keeps of a job (``_form``), a registered
function's call with JSON arguments (``_registered``, the tagged JSON in
``_json``), the result markers a job's arguments may hold (``_markers``:
``js.result_of``, ``js.results_of``; here because the tagged JSON decodes
them), a job's rare workflow fields (``_flow``), what text a store can
keep (``_text``), the retry policy (``_retry``), the executor contract
jobs run through (``_executor``) and the entry-point lookup that finds
executor and store plugins (``_plugins``).

May import only the top-level leaf modules (``_enums``, ``_exceptions``,
``_log``): everything else in jobsched builds on this package.
"""
