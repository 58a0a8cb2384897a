"""A third-party ``jobsched`` command, as a user would publish one: the
``jobsched.commands`` entry point names this module's ``hello``."""

from __future__ import annotations

import click


@click.command()
@click.argument("who")
@click.option("--loud", is_flag=True, help="Shout it.")
def hello(who: str, loud: bool) -> None:
    """Greet WHO (a command from jobsched-testplugin)."""
    # What the command needs to run is imported when it runs: `jobsched
    # --help` imports this module alone.
    from ._greeting import greeting

    text = greeting(who)
    click.echo(text.upper() if loud else text)
