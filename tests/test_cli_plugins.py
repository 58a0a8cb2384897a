"""Commands that other distributions add to `jobsched` through the
``jobsched.commands`` entry-point group: found, run, listed, and every way a
plugin can be broken without breaking the other commands.

Most tests fake the installed entry points (the ``fake_entry_points`` fixture,
as the executor and store plugin tests do) and run the command line in this
process; the last ones use the real entry points the dev environment
installs (jobsched-testplugin's ``hello``, jobsched-dashboard's ``dashboard``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import EntryPoint

import pytest
from fake_plugins import entry_point
from test_cli import env_for, jobsched

from jobsched._cli import _commands, main


def _ep(name: str, value: str, dist: str) -> EntryPoint:
    return entry_point(_commands.GROUP, name, value, dist)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The exit status, stdout and stderr of ``jobsched ARGS``, run here."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _listed(help_text: str) -> list[str]:
    """The command names ``--help`` lists."""
    section = help_text.split("Commands:\n", 1)[1]
    return [line.split()[0] for line in section.splitlines() if line.startswith("  ")]


CORE = [
    "cancel",
    "jobs",
    "members",
    "queue",
    "queues",
    "retry",
    "schedule",
    "schedules",
    "show",
    "stats",
    "worker",
    "workflow",
    "workflows",
]


def test_a_plugin_command_runs_and_is_listed(
    fake_entry_points: list[EntryPoint], capsys: pytest.CaptureFixture[str]
) -> None:
    fake_entry_points.append(_ep("echo", "fake_plugins:echo_command", "jobsched-echo"))
    assert run(capsys, "echo", "--times", "2") == (0, "echo\necho\n", "")
    code, out, err = run(capsys, "--help")
    assert (code, err) == (0, "")
    assert _listed(out) == sorted([*CORE, "dashboard", "echo"])
    assert "Say echo (a fake plugin's command)." in out
    code, out, _ = run(capsys, "echo", "--help")
    assert code == 0 and "Usage: jobsched echo [OPTIONS]" in out


def test_a_plugin_group_adds_its_subcommands(
    fake_entry_points: list[EntryPoint], capsys: pytest.CaptureFixture[str]
) -> None:
    fake_entry_points.append(_ep("tools", "fake_plugins:tools", "jobsched-tools"))
    assert run(capsys, "tools", "ping") == (0, "pong\n", "")
    code, out, _ = run(capsys, "tools", "--help")
    assert code == 0 and "ping" in out and "Answer pong." in out


BROKEN = [
    pytest.param(
        "fake_plugins_missing_module:command",
        "failed to load: ModuleNotFoundError: No module named 'fake_plugins_missing_module'",
        id="cannot-import",
    ),
    pytest.param("fake_plugins:NOT_CALLABLE", "is int, not a click command", id="not-a-command"),
    pytest.param(
        "fake_plugins:failing_factory", "is function, not a click command", id="a-function"
    ),
]


@pytest.mark.parametrize(("value", "says"), BROKEN)
def test_a_broken_plugin_breaks_no_other_command(
    fake_entry_points: list[EntryPoint],
    capsys: pytest.CaptureFixture[str],
    value: str,
    says: str,
) -> None:
    """--help lists the rest with a one-line warning naming the distribution;
    running it is a one-line error; the other commands, plugins too, work."""
    fake_entry_points += [
        _ep("broken", value, "jobsched-broken"),
        _ep("echo", "fake_plugins:echo_command", "jobsched-echo"),
    ]
    origin = f"the command 'broken' ({value}, from the distribution jobsched-broken)"
    code, out, err = run(capsys, "--help")
    assert code == 0 and _listed(out) == sorted([*CORE, "dashboard", "echo"])
    assert err.startswith(f"jobsched: warning: {origin}") and says in err, err
    assert err.endswith("; left out\n") and len(err.splitlines()) == 1
    code, out, err = run(capsys, "broken")
    assert (code, out) == (1, "")
    assert err.startswith(f"jobsched: error: {origin}") and says in err
    assert len(err.splitlines()) == 1
    assert run(capsys, "echo") == (0, "echo\n", "")
    code, out, err = run(capsys, "jobs", "--help")
    assert (code, err) == (0, "") and "Usage: jobsched jobs" in out


def test_two_distributions_claiming_one_name(
    fake_entry_points: list[EntryPoint], capsys: pytest.CaptureFixture[str]
) -> None:
    """Neither wins: running it names both, --help leaves it out with a warning."""
    fake_entry_points += [
        _ep("echo", "fake_plugins:echo_command", "dist-b"),
        _ep("echo", "fake_plugins:other_echo_command", "dist-a"),
    ]
    clash = (
        "the command 'echo' is registered by several distributions (dist-a, dist-b); "
        "uninstall all but one"
    )
    assert run(capsys, "echo") == (1, "", f"jobsched: error: {clash}\n")
    code, out, err = run(capsys, "--help")
    assert code == 0 and "echo" not in _listed(out)
    assert err == f"jobsched: warning: {clash}; left out\n"


def test_one_distribution_seen_twice_is_no_clash(
    fake_entry_points: list[EntryPoint], capsys: pytest.CaptureFixture[str]
) -> None:
    fake_entry_points += [_ep("echo", "fake_plugins:echo_command", "dist-a")] * 2
    assert run(capsys, "echo") == (0, "echo\n", "")


def test_a_plugin_cannot_replace_a_core_command(
    fake_entry_points: list[EntryPoint], capsys: pytest.CaptureFixture[str]
) -> None:
    fake_entry_points.append(_ep("jobs", "fake_plugins:echo_command", "jobsched-evil"))
    code, out, err = run(capsys, "jobs", "--help")
    assert (code, err) == (0, "") and "List jobs, newest first." in out
    code, out, err = run(capsys, "--help")
    assert code == 0 and _listed(out) == sorted([*CORE, "dashboard"])
    assert err == (
        "jobsched: warning: the command 'jobs' from the distribution jobsched-evil is "
        "ignored: jobsched has its own 'jobs'\n"
    )


def test_an_unknown_command_suggests_a_plugin_s(
    fake_entry_points: list[EntryPoint], capsys: pytest.CaptureFixture[str]
) -> None:
    fake_entry_points.append(_ep("echo", "fake_plugins:echo_command", "jobsched-echo"))
    code, _, err = run(capsys, "ecco")
    assert code == 1
    assert err == (
        "jobsched: error: No such command 'ecco'. Did you mean 'echo'? (see 'jobsched --help')\n"
    )


@pytest.mark.parametrize("args", [[], ["--store", "sqlite:///x.db", "--port", "1"], ["--help"]])
def test_the_dashboard_not_installed_says_what_to_install(
    fake_entry_points: list[EntryPoint], capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    """No distribution registers `dashboard`: not "No such command", but the
    extra that installs it, whatever the arguments; --help lists it so."""
    assert run(capsys, "dashboard", *args) == (
        1,
        "",
        "jobsched: error: the dashboard is not installed; to fix: "
        'pip install "jobsched-core[dashboard]"\n',
    )
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "dashboard  Serve the web dashboard (not installed: the [dashboard]" in out


def test_the_dashboard_failing_to_load_says_what_to_install(
    fake_entry_points: list[EntryPoint], capsys: pytest.CaptureFixture[str]
) -> None:
    fake_entry_points.append(_ep("dashboard", "fake_plugins_missing:cmd", "jobsched-dashboard"))
    code, out, err = run(capsys, "dashboard")
    assert (code, out) == (1, "")
    assert "from the distribution jobsched-dashboard) failed to load: ModuleNotFoundError" in err
    assert err.endswith('; to fix: pip install "jobsched-core[dashboard]"\n')


# ── the installed entry points ────────────────────────────────────────────


def test_a_third_party_distribution_adds_a_command() -> None:
    """jobsched-testplugin registers `hello` in its pyproject.toml; the
    installed script finds it through importlib.metadata."""
    done = jobsched("hello", "bob", "--loud")
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        "HELLO BOB, FROM JOBSCHED-TESTPLUGIN\n",
        "",
    )
    done = jobsched("--help")
    assert "hello      Greet WHO (a command from jobsched-testplugin)." in done.stdout
    assert "dashboard  Serve the web dashboard (the [dashboard] extra)." in done.stdout


_LOADED = """
import json, sys
from jobsched._cli import main
code = main({args!r})
print(json.dumps([code, sorted(m for m in sys.modules if m.split(".")[0] in {roots!r})]))
"""

#: A plugin's modules, the web stack, and what reads the entry points.
ROOTS = ("jobsched_testplugin", "jobsched_dashboard", "starlette", "jinja2", "uvicorn")


def _loaded(*args: str) -> list[str]:
    """The modules of ROOTS, and whether entry points were read, after ``jobsched ARGS``."""
    roots = (*ROOTS, "importlib")
    done = subprocess.run(
        [sys.executable, "-c", _LOADED.format(args=list(args), roots=roots)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env_for(),
    )
    code, modules = json.loads(done.stdout.strip().splitlines()[-1])
    assert code == 0, done.stderr
    return [m for m in modules if m.split(".")[0] != "importlib" or m == "importlib.metadata"]


def test_help_imports_each_command_s_module_alone() -> None:
    """`jobsched --help` imports the module each entry point names, not what
    the command imports to run (the plugin's other modules, the web stack)."""
    assert _loaded("--help") == [
        "importlib.metadata",
        "jobsched_dashboard",
        "jobsched_dashboard._command",
        "jobsched_testplugin",
        "jobsched_testplugin.cli",
    ]


def test_a_core_command_imports_no_plugin() -> None:
    """`jobsched jobs` does not even read the entry points."""
    assert _loaded("jobs", "--help") == []
    assert _loaded("hello", "ann") == [
        "importlib.metadata",
        "jobsched_testplugin",
        "jobsched_testplugin._greeting",
        "jobsched_testplugin.cli",
    ]
