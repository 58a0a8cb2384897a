"""The core's layout: each subpackage imports only the ones below it, and a
store package imports only public names from jobsched (issue 23)."""

from __future__ import annotations

import ast
import pickle
import pickletools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "packages" / "core" / "src" / "jobsched"

#: Bottom to top: a part may import its own layer and those before it.
LAYERS = [
    "leaf", "_jobs", "_workflows", "_ordering", "store", "_time", "_engine", "_sync", "_app",
    "_metrics", "_cli",
]  # fmt: skip
LEAVES = {"_enums", "_exceptions", "_log"}


def _part(module: str) -> str | None:
    """The layer of ``jobsched.<...>``, or None for the package itself and the
    stored-format names at its top (they only re-export)."""
    parts = module.split(".")
    if len(parts) == 1:
        return None
    head = parts[1]
    if head in LEAVES:
        return "leaf"
    return head if head in LAYERS else None


def _module_of(path: Path) -> str:
    rel = path.relative_to(CORE.parent).with_suffix("")
    names = list(rel.parts)
    if names[-1] == "__init__":
        names.pop()
    return ".".join(names)


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every jobsched module ``path`` imports, at any depth (lazy ones too)."""
    module = _module_of(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if node.module is None or target == "jobsched":
                found += [(node.lineno, f"{target}.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, target))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return [(line, name) for line, name in found if name.split(".")[0] == "jobsched"]


def test_no_part_imports_a_part_above_it() -> None:
    wrong = []
    for path in sorted(CORE.rglob("*.py")):
        own = _part(_module_of(path))
        if own is None:
            continue
        for line, target in _imports(path):
            other = _part(target)
            if other is not None and LAYERS.index(other) > LAYERS.index(own):
                wrong.append(f"{path.relative_to(ROOT)}:{line} ({own}) imports {target} ({other})")
    assert not wrong, "\n".join(wrong)


def test_every_part_says_what_lives_there() -> None:
    for part in LAYERS[1:]:
        doc = ast.get_docstring(ast.parse((CORE / part / "__init__.py").read_text()))
        assert doc and "import" in doc, f"{part}/__init__.py must say what it may import"


def test_the_core_does_not_import_the_dashboard() -> None:
    """The dashboard adds its command through the ``jobsched.commands`` entry
    points (issue 23): no module of the core names its package, so neither an
    import nor ``importlib.import_module("...")`` of it can hide there."""
    wrong = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted(CORE.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "jobsched_dashboard" in line
    ]
    assert not wrong, "the core names jobsched_dashboard:\n" + "\n".join(wrong)


@pytest.mark.parametrize(
    "package",
    [
        "packages/store-sqlite",
        "packages/store-postgres",
        # The store guide's example, and the conformance suite it runs: what
        # a third party sees.
        "examples/store-dict",
        "packages/core/src/jobsched/store/testing",
    ],
)
def test_a_store_package_imports_only_public_names(package: str) -> None:
    import jobsched
    import jobsched.store

    public = {"jobsched": set(jobsched.__all__), "jobsched.store": set(jobsched.store.__all__)}
    wrong = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module.split(".")[0] != "jobsched":
                    continue
                names = public.get(node.module)
                for alias in node.names:
                    if names is None or alias.name not in names:
                        wrong.append(f"{path.name}:{node.lineno} {node.module}.{alias.name}")
            elif isinstance(node, ast.Import):
                wrong += [
                    f"{path.name}:{node.lineno} {a.name}"
                    for a in node.names
                    if a.name.startswith("jobsched.")
                ]
    assert not wrong, "private names imported:\n" + "\n".join(wrong)


def _globals_in(data: bytes) -> set[str]:
    names: set[str] = set()
    strings: list[str] = []
    for op, arg, _ in pickletools.genops(data):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
            strings.append(arg)
        elif op.name == "STACK_GLOBAL":
            names.add(f"{strings[-2]}.{strings[-1]}")
        elif op.name == "GLOBAL":
            names.add(arg.replace(" ", "."))
    return names


def _sample() -> int:
    return 1


def test_stored_rows_keep_the_module_names_older_versions_wrote() -> None:
    """Rows pickle these by reference: the names are the stored format, so
    moving code must not change them (members of an older version share a
    store with this one during a deploy)."""
    import jobsched as js
    from jobsched._jobs._form import stored_form
    from jobsched._time._recurring import StoredSchedule

    job = js.FunctionJob(_sample, retry=js.RetryPolicy(), priority=js.JobPriority.HIGH)
    cron = StoredSchedule(_sample, None, js.CronTrigger("*/5 * * * *"), False)
    found = _globals_in(pickle.dumps(stored_form(job), protocol=pickle.HIGHEST_PROTOCOL))
    found |= _globals_in(pickle.dumps(cron, protocol=pickle.HIGHEST_PROTOCOL))
    ours = {name for name in found if name.startswith("jobsched.")}
    assert ours == {
        "jobsched._jobform.restore",
        "jobsched._function_job.FunctionJob",
        "jobsched._retry.RetryPolicy",
        "jobsched._enums.JobPriority",
        "jobsched._recurring.StoredSchedule",
        "jobsched._cron.CronTrigger",
    }
    again = pickle.loads(pickle.dumps(stored_form(job)))
    assert isinstance(again, js.FunctionJob) and again.retry == js.RetryPolicy()


def test_the_architecture_page_draws_the_folders() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text()
    folders = sorted(p.parent.name for p in CORE.glob("*/__init__.py"))
    missing = [f for f in folders if f"{f}/" not in page]
    assert not missing, f"docs/architecture.md does not draw {missing}"
    modules = sorted(
        p.name for p in CORE.glob("*/*.py") if p.name != "__init__.py" and p.parent.name != "_cli"
    )
    unlisted = [m for m in modules if f"`{m}`" not in page]
    assert not unlisted, f"docs/architecture.md's table does not list {unlisted}"


def _top_level_imports(path: Path) -> set[str]:
    """The jobsched modules ``path`` imports when it is imported itself: not
    those in functions (loaded on first use) or under ``TYPE_CHECKING``."""
    module = _module_of(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if node.module:
                found.add(target)
            # `from . import _x` imports the module _x (its package is being
            # imported already); `from .x import name` imports x.
            found |= {f"{target}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def test_no_import_circle() -> None:
    """Modules import each other in one direction: a circle would make the
    import order matter, and each part's docstring a promise nobody keeps."""
    modules = {_module_of(p): p for p in CORE.rglob("*.py") if "testing" not in p.parts}
    graph = {
        name: {t for t in _top_level_imports(path) if t in modules and t != name}
        for name, path in modules.items()
    }
    circles = []
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for other in sorted(graph[name]):
            if state.get(other) == 1:
                circles.append(" -> ".join([*trail[trail.index(other) :], other]))
            elif other not in state:
                visit(other, [*trail, other])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not circles, "\n".join(circles)
