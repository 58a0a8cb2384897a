"""Workflows: results that flow between jobs, and failure policies per edge.

The markers a job's arguments hold (``_markers``: ``result_of``,
``results_of``), finding them in a job (``_inputs``: ``find_inputs``), the
edges a ``depends_on`` stands for (``_edges``: ``After``), the binding of
upstreams' results into a job before it runs (``_bind``), and the
collection of jobs enqueued as one (``_workflow``: ``Workflow``,
``WorkflowInfo``).

``import jobsched`` loads ``_markers`` and ``_edges`` only; finding, binding
and the workflow classes load on first use (tests/test_workflow_api.py).
"""
