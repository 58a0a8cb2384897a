"""``jobsched dashboard``: the command this distribution adds to ``jobsched``
(the ``jobsched.commands`` entry point in its pyproject.toml).

Light on purpose: ``jobsched --help`` imports this module for the one-line
help, and the web stack (Starlette, Jinja2, uvicorn) loads only when the
command runs.
"""

from __future__ import annotations

import importlib

import click

from jobsched._cli._main import UserError, make_store, store_option

INSTALL = 'pip install "jobsched-core[dashboard]"'


@click.command()
@store_option
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to bind.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="The port (0: any free one).",
)
@click.option(
    "--token",
    envvar="JOBSCHED_DASHBOARD_TOKEN",
    show_envvar=True,
    help="The token the page's actions (cancel, retry) need; without one they are refused.",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="Also answer requests for NAME (the Host a browser or proxy sends), besides the "
    "address bound; repeat for several. Other names get 400 (DNS rebinding).",
)
def dashboard(
    store_url: str | None, host: str, port: int, token: str | None, allowed_hosts: tuple[str, ...]
) -> None:
    """Serve the web dashboard (the [dashboard] extra)."""
    url = store_url or ""
    make_store(url)  # not opened: a missing, bad or unknown URL fails here, in one line
    if token is not None and not token.strip():
        raise UserError("--token is empty: give a token, or leave --token out to refuse actions")
    if any(not name.strip() for name in allowed_hosts):
        raise UserError("--allowed-host is empty: give a host name, e.g. jobs.example.org")
    try:
        # Imported here: --help needs none of the web stack.
        module = importlib.import_module("jobsched_dashboard._serve")
    except ImportError as exc:
        raise UserError(
            f"the dashboard cannot load ({type(exc).__name__}: {exc}); to fix: {INSTALL}"
        ) from None
    try:
        module.serve(url, host, port, token, allowed_hosts=allowed_hosts)
    except ValueError as exc:  # what serve() documents for bad input
        raise UserError(str(exc)) from None
