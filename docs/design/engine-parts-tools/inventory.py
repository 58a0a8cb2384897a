# ruff: noqa: E501, B023, RUF017  (scratch scripts of the issue 36 plan, not for merging)
"""Issue 36's inventory: which private attributes each engine layer sets, reads
and mutates, and every branch on the store link. Run from the repo root:
    python3 scratch/plan36/inventory.py [--matrix] [--branches] [--json]
"""

from __future__ import annotations

import ast
import collections
import json
import sys
from pathlib import Path

ENGINE = Path("packages/core/src/jobsched/_engine")
# The tower, top to bottom, and the module each class lives in.
TOWER = [
    ("JobScheduler", "_scheduler.py"),
    ("Lifecycle", "_lifecycle.py"),
    ("Results", "_results.py"),
    ("Cancelling", "_cancel.py"),
    ("Stored", "_stored.py"),
    ("Dispatch", "_dispatch.py"),
    ("Timers", "_timers.py"),
    ("Schedules", "_schedules.py"),
    ("Submission", "_submission.py"),
    ("Outcomes", "_outcomes.py"),
    ("SchedulerState", "_state.py"),
]
# Code outside the tower that works on the scheduler's state through a name.
SIDE = [("LinkHost", "_linkhost.py", "s"), ("(functions)", "_loadgrace.py", "s")]
MUTATORS = {
    "append",
    "appendleft",
    "pop",
    "popleft",
    "add",
    "discard",
    "clear",
    "setdefault",
    "extend",
    "remove",
    "update",
    "set",
}


def parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def methods_of_tower() -> set[str]:
    names = set()
    for _, module in TOWER:
        for node in ast.walk(ast.parse((ENGINE / module).read_text())):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        names.add(item.name)
    return names


def scan(module: str, cls: str | None, selves: set[str]):
    """(name -> {"set","read","mutate"} counts) for private attributes of the
    scheduler touched in ``cls`` of ``module`` (the whole module if cls is None)."""
    tree = ast.parse((ENGINE / module).read_text())
    up = parents(tree)
    roots = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls]
    if cls is None or not roots:
        roots = [tree]
    uses: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for root in roots:
        for node in ast.walk(root):
            if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
                continue
            if node.value.id not in selves:
                continue
            name = node.attr
            if not name.startswith("_") or name.startswith("__") or name == "_scheduler":
                continue
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                uses[name]["set"] += 1
                if isinstance(up.get(node), ast.AugAssign):
                    uses[name]["read"] += 1
                continue
            parent = up.get(node)
            if (
                isinstance(parent, ast.Subscript) and isinstance(parent.ctx, (ast.Store, ast.Del))
            ) or (
                isinstance(parent, ast.Attribute)
                and parent.attr in MUTATORS
                and isinstance(up.get(parent), ast.Call)
            ):
                uses[name]["mutate"] += 1
            else:
                uses[name]["read"] += 1
    return uses


def link_branches():
    """Every test of whether there is a store link, in the tower, LinkHost and _loadgrace."""
    found = []
    for path in sorted(ENGINE.glob("*.py")):
        text = path.read_text()
        lines = text.splitlines()
        tree = ast.parse(text)
        up = parents(tree)

        # Locals bound from self._link / s._link, per function.
        def func_of(node):
            while node in up:
                node = up[node]
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    return node
            return None

        aliases: dict[ast.AST, set[str]] = collections.defaultdict(set)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and _is_link(node.value, set()):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        aliases[func_of(node)].add(target.id)

        def is_link(expr):
            return _is_link(expr, aliases.get(func_of(expr), set()))

        for node in ast.walk(tree):
            hit = None
            if isinstance(node, ast.Compare) and len(node.ops) == 1:
                op, right = node.ops[0], node.comparators[0]
                if (
                    isinstance(op, (ast.Is, ast.IsNot))
                    and isinstance(right, ast.Constant)
                    and right.value is None
                    and is_link(node.left)
                ):
                    hit = "is None" if isinstance(op, ast.Is) else "is not None"
            elif (isinstance(node, (ast.If, ast.IfExp, ast.While)) and is_link(node.test)) or (
                isinstance(node, ast.BoolOp) and any(is_link(v) for v in node.values)
            ):
                hit = "truthy"
            elif (
                isinstance(node, ast.UnaryOp)
                and isinstance(node.op, ast.Not)
                and is_link(node.operand)
            ):
                hit = "not"
            if hit:
                fn = func_of(node)
                assert_only = isinstance(up.get(node), ast.Assert)
                found.append(
                    {
                        "file": path.name,
                        "line": node.lineno,
                        "function": fn.name if fn else "<module>",
                        "test": hit,
                        "assert": assert_only,
                        "text": lines[node.lineno - 1].strip(),
                    }
                )
    return sorted(found, key=lambda f: (f["file"], f["line"]))


def _is_link(expr, local_names):
    if (
        isinstance(expr, ast.Attribute)
        and expr.attr == "_link"
        and isinstance(expr.value, ast.Name)
    ):
        return expr.value.id in ("self", "s")
    return isinstance(expr, ast.Name) and expr.id in local_names


def main() -> None:
    methods = methods_of_tower()
    rows = []
    per_attr: dict[str, dict[str, list[str]]] = collections.defaultdict(
        lambda: {"set": [], "read": [], "mutate": []}
    )
    for cls, module in TOWER:
        uses = scan(module, cls, {"self"})
        rows.append((cls, module, uses))
    for cls, module, name in SIDE:
        uses = scan(module, None if cls.startswith("(") else cls, {name})
        rows.append((cls, module, uses))
    out = []
    for cls, module, uses in rows:
        data = {n: c for n, c in uses.items() if n not in methods}
        meth = {n: c for n, c in uses.items() if n in methods}
        sets = sorted(n for n, c in data.items() if c["set"])
        muts = sorted(n for n, c in data.items() if c["mutate"] and not c["set"])
        reads = sorted(n for n, c in data.items() if c["read"] and not c["set"] and not c["mutate"])
        for n, c in data.items():
            for kind in ("set", "read", "mutate"):
                if c[kind]:
                    per_attr[n][kind].append(cls)
        whole = scan(module, None, {"self", "s"})
        out.append(
            {
                "class": cls,
                "module": module,
                "lines": len((ENGINE / module).read_text().splitlines()),
                "distinct": len(uses),
                "module_distinct": len(whole),
                "data": len(data),
                "methods": len(meth),
                "sets": sets,
                "mutates": muts,
                "reads_only": reads,
                "calls": sorted(meth),
            }
        )
    branches = link_branches()
    if "--json" in sys.argv:
        print(json.dumps({"layers": out, "attrs": per_attr, "branches": branches}, indent=1))
        return
    print(
        "| layer | module | lines | private names touched (module) | data attrs | of which set | mutated only | read only | private methods called |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in out:
        print(
            f"| {r['class']} | {r['module']} | {r['lines']} | {r['module_distinct']} | {r['data']} "
            f"| {len(r['sets'])} | {len(r['mutates'])} | {len(r['reads_only'])} | {r['methods']} |"
        )
    if "--detail" in sys.argv:
        for r in out:
            print(f"\n### {r['class']} ({r['module']})")
            print("- sets:", ", ".join(r["sets"]) or "-")
            print("- mutates:", ", ".join(r["mutates"]) or "-")
            print("- reads:", ", ".join(r["reads_only"]) or "-")
            print("- calls:", ", ".join(r["calls"]) or "-")
    if "--matrix" in sys.argv:
        print("\n| attribute | set in | mutated in | read in |")
        print("|---|---|---|---|")
        for n in sorted(per_attr, key=lambda n: -len(set(sum(per_attr[n].values(), [])))):
            a = per_attr[n]
            print(
                f"| {n} | {', '.join(a['set'])} | {', '.join(a['mutate'])} | {', '.join(a['read'])} |"
            )
    if "--branches" in sys.argv:
        real = [b for b in branches if not b["assert"]]
        print(f"\nlink tests: {len(branches)} ({len(real)} not asserts)")
        per = collections.Counter(b["file"] for b in real)
        print(dict(per))
        for b in branches:
            flag = " (assert)" if b["assert"] else ""
            print(f"{b['file']}:{b['line']} {b['function']} [{b['test']}]{flag}: {b['text']}")


if __name__ == "__main__":
    main()
