"""Workflows: results that flow between jobs, and failure policies per edge.

Finding the result markers in a job (``_inputs``: ``find_inputs``; the
markers themselves are ``_jobs._markers``, which the tagged JSON decodes),
the edges a ``depends_on`` stands for (``_edges``: ``After``), the binding
of upstreams' results into a job before it runs (``_bind``), and the
collection of jobs enqueued as one (``_workflow``: ``Workflow``,
``WorkflowInfo``).

May import only ``_jobs`` and the leaf modules: the engine builds on it.
``import jobsched`` loads ``_edges`` only; finding, binding and the
workflow classes load on first use (tests/test_workflow_api.py).
"""
