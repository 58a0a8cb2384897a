"""Jobs: what to run and how it runs.

The job classes (``_job``), jobs made from plain callables (``_function``),
the form a durable store keeps of a job (``_form``), a registered
function's call with JSON arguments (``_registered``, the tagged JSON in
``_json``), what text a store can keep (``_text``), the retry policy
(``_retry``), the executor contract jobs run through (``_executor``) and the
entry-point lookup that finds executor and store plugins (``_plugins``).

May import only the top-level leaf modules (``_enums``, ``_exceptions``,
``_log``): everything else in jobsched builds on this package. The one
exception: ``_json`` decodes a result marker's tag to the marker
(``_workflows._markers``, which builds on this package), imported there
at the first tagged value.
"""
