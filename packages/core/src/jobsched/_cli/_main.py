"""The command group, the ``--store`` option and the one-line errors.

Every failure a user can cause (a bad option value, a bad or unreachable store,
an unknown job) ends the command with one line on stderr and exit status 1,
never a traceback: click's own usage errors too, which it would otherwise
print with the usage text and exit status 2.
"""

from __future__ import annotations

import difflib
import math
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .._enums import JobStatus
from .._exceptions import SchedulerError
from ..store._base import JobStore

F = TypeVar("F", bound=Callable[..., Any])

if TYPE_CHECKING:
    # Generic from click 8.4 on; the subscript is for the type checkers only,
    # so click 8.1 to 8.3 still work at run time.
    IntParam = click.ParamType[int]
    PairParam = click.ParamType[tuple[str, int]]
    StatusParam = click.ParamType[JobStatus]
    FloatParam = click.ParamType[float]
else:
    IntParam = PairParam = StatusParam = FloatParam = click.ParamType

#: Where the store URL comes from when ``--store`` is not given.
STORE_ENV = "JOBSCHED_STORE"


class Count(click.IntRange):
    """A whole number >= 1 (and <= ``max``), named as such in errors (IntRange
    says "integer range")."""

    name = "integer"

    def __init__(self, max: int | None = None) -> None:
        super().__init__(min=1, max=max)


class Seconds(click.FloatRange):
    """A finite number of seconds >= 0: ``nan`` passes FloatRange's bounds
    (every comparison with it is false), and ``inf`` or ``nan`` as a grace
    meant a worker that never stopped on SIGTERM."""

    name = "seconds"

    def __init__(self) -> None:
        super().__init__(min=0)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a finite number of seconds (e.g. 30)", param, ctx)
        return seconds


class UserError(click.ClickException):
    """Something the user can fix: one line on stderr, exit status 1."""

    exit_code = 1


def store_option(command: F) -> F:
    """``--store URL``, or the ``JOBSCHED_STORE`` environment variable."""
    return click.option(
        "--store",
        "store_url",
        metavar="URL",
        envvar=STORE_ENV,
        show_envvar=True,
        help="The store: sqlite:///jobs.db, postgresql://user@host/db.",
    )(command)


def need_store(url: str | None) -> str:
    """The store URL, or the one-line error that says how to give one."""
    if not url:
        raise UserError(
            f"no store given: pass --store URL or set {STORE_ENV} (e.g. sqlite:///jobs.db)"
        )
    if url == "memory":
        raise UserError(
            "the 'memory' store lives inside one process, where no other command can "
            "reach it; use a durable store such as sqlite:///jobs.db"
        )
    return url


def make_store(url: str) -> JobStore:
    """The store for ``url``, not yet opened; a bad URL or scheme is a user error."""
    from ..store._registry import open_store

    try:
        return open_store(need_store(url))
    except (ValueError, TypeError) as exc:
        raise UserError(str(exc)) from None


@asynccontextmanager
async def opened(url: str | None) -> AsyncIterator[JobStore]:
    """An open store holding jobs already: reading one must not create it."""
    store = make_store(url or "")
    path = getattr(store, "path", None)
    # A store kept in a file names it: a mistyped path must not make a new,
    # empty store that then shows no jobs.
    if isinstance(path, Path) and not path.exists():
        raise UserError(
            f"no store at {store.url}: {str(path)!r} does not exist (a worker or a "
            "scheduler creates it)"
        )
    # Nor may a database without jobsched's tables get them from a read.
    if await store.exists() is False:
        raise UserError(
            f"no jobsched store at {store.url}: the database has no jobsched tables (a "
            "worker or a scheduler creates them; check the URL)"
        )
    await store.open()
    try:
        yield store
    except NotImplementedError as exc:
        raise UserError(f"the store {store.url} cannot answer this: {exc}") from None
    finally:
        await store.close()


class Commands(click.Group):
    """The ``jobsched`` group: its commands come from :mod:`._commands`, each
    imported when it is run or listed."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from . import _commands

        return _commands.names()

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        from . import _commands

        try:
            return _commands.load(cmd_name)
        except SchedulerError as exc:
            if not ctx.meta.get(_LISTING):
                raise UserError(str(exc)) from None
            warn(f"{exc}; left out")  # --help lists the other commands
            return None

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        from . import _commands

        name = args[0]
        known = name in _commands.BUILT_IN or name.startswith("-") or ctx.resilient_parsing
        if not known and name not in _commands.names():
            # click would suggest from self.commands, which stays empty.
            close = difflib.get_close_matches(name, _commands.names(), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise click.UsageError(f"No such command {name!r}.{hint}", ctx)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from . import _commands

        for warning in _commands.shadowing():
            warn(warning)
        ctx.meta[_LISTING] = True
        try:
            super().format_commands(ctx, formatter)
        finally:
            ctx.meta[_LISTING] = False


_LISTING = "jobsched.listing"


@click.group(
    cls=Commands,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="jobsched-core", prog_name="jobsched")
def cli() -> None:
    """Run and inspect jobsched jobs kept in a durable store.

    Every command takes --store URL (or the JOBSCHED_STORE environment
    variable): sqlite:///jobs.db, or postgresql://user@host/db.
    """


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; the exit status (0 done, 1 user error)."""
    try:
        code = cli.main(args=argv, prog_name="jobsched", standalone_mode=False)
    except click.exceptions.UsageError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError" and exc.ctx is not None:
            # Plain `jobsched` (click >= 8.2 makes that an error): the help.
            click.echo(exc.ctx.get_help())
            return 0
        where = exc.ctx.command_path if exc.ctx is not None else "jobsched"
        _fail(f"{exc.format_message()} (see '{where} --help')")
        return 1
    except click.ClickException as exc:
        _fail(exc.format_message())
        return exc.exit_code
    except click.exceptions.Abort:
        return 130
    except SchedulerError as exc:  # StoreUnavailableError, StoreNotFoundError, ...
        _fail(str(exc))
        return 1
    except Exception as exc:
        # A scheduler's tasks that met one cause at once (a corrupt store
        # file, seen by the claim and the commit alike) raise it as a group:
        # still one line per distinct message, not a traceback.
        errors = _leaves(exc)
        if not errors or not all(isinstance(e, SchedulerError) for e in errors):
            raise
        for message in dict.fromkeys(str(e) for e in errors):
            _fail(message)
        return 1
    return code if isinstance(code, int) else 0


def _leaves(error: BaseException) -> list[BaseException]:
    """The errors in an exception group, nested groups flattened; [] for no group."""
    inner = getattr(error, "exceptions", None)  # BaseExceptionGroup, also the 3.10 backport
    if inner is None:
        return []
    return [leaf for e in inner for leaf in (_leaves(e) or [e])]


def _fail(message: str) -> None:
    _say("error", message)


def warn(message: str) -> None:
    """One line on stderr: ``jobsched: warning: ...``."""
    _say("warning", message)


def _say(level: str, message: str) -> None:
    from ._format import printable

    click.echo(f"jobsched: {level}: {printable(' '.join(message.split()))}", err=True)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
