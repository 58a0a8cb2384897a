"""The store link's shape (issue 36): parts that StoreLink composes, none
inheriting another, behind the names the engine and the tools use."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

LINK = (
    Path(__file__).resolve().parent.parent
    / "packages"
    / "core"
    / "src"
    / "jobsched"
    / "_engine"
    / "_link"
)
#: What a link part may derive from: a role, an error, nothing of the link.
ALLOWED_BASES = {"Protocol", "Exception"}


def _classes() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(LINK.glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                found[f"{path.name}:{node.name}"] = [ast.unparse(b) for b in node.bases]
    return found


def test_no_link_class_inherits_another() -> None:
    classes = _classes()
    names = {key.split(":")[1] for key in classes}
    wrong = {
        key: bases
        for key, bases in classes.items()
        if any(b in names or b not in ALLOWED_BASES for b in bases)
    }
    assert not wrong, f"link classes built on others: {wrong}"


def test_no_link_part_sets_another_objects_private_state() -> None:
    """Each part sets its own attributes: no module sets another object's
    private attribute (``x._y = ...`` with x not self)."""
    wrong = []
    for path in sorted(LINK.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            else:
                continue
            for target in targets:
                if (
                    isinstance(target, ast.Attribute)
                    and target.attr.startswith("_")
                    and not (isinstance(target.value, ast.Name) and target.value.id == "self")
                ):
                    wrong.append(f"{path.name}:{node.lineno} {ast.unparse(target)}")
    assert not wrong, "\n".join(wrong)


#: The link's names the engine, the CLI and the tests use (issue 36's step 4
#: kept every one).
SURFACE = [
    "store",
    "codec",
    "owner",
    "stopped",
    "closing",
    "claims_ahead",
    "unkeyed_schedules",
    "rates",
    "tenants",
    "queues",
    "producer",
    "names",
    "next_id",
    "next_seq",
    "add",
    "unconfirmed",
    "record",
    "start",
    "outcomes_piled_up",
    "wake_claimer",
    "remove_schedule",
    "put_schedule",
    "cancel",
    "flush",
    "read",
    "next_progress",
    "next_settled",
    "progress",
    "fire",
    "claims_settled",
    "wake_heartbeat",
    "cut",
    "hand_back",
    "close",
    "committer",
    "claimer",
    "heartbeat",
]


@pytest.mark.anyio
async def test_the_link_offers_the_names_the_engine_uses(tmp_path: Path) -> None:
    import jobsched as js
    from jobsched._engine._link import StoreLink

    store = js.open_store(f"sqlite:///{tmp_path / 'jobs.db'}")
    link = StoreLink(store, object(), 0)  # type: ignore[arg-type]  # no task runs
    missing = [name for name in SURFACE if not hasattr(link, name)]
    assert not missing
    link.names = frozenset({"a"})
    link.producer = True
    assert link.names == frozenset({"a"}) and link.producer and not link.closing
    link.close()
    assert link.closing
