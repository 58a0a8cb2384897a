"""The app: a project's jobs (``@app.job``) and scheduler settings, declared once.

``_app`` the App; ``_function`` JobFunction and its options sender;
``_target`` where an enqueue goes; ``_periodic`` ``@app.periodic``;
``_testing`` ``app.testing()``; ``_json`` the tagged JSON (re-exported from
``_jobs``). The job a registered call becomes and its JSON codec live in
``_jobs`` (``_registered.py``, ``_json.py``), where the engine can reach
them. It may import every part below it (it builds schedulers, and the
background facade); only ``_cli`` is above it.
"""
