"""Which layer calls which other layer's methods (self._x() / s._x() / self.x())."""

import ast
import collections
import sys

sys.path.insert(0, "scratch/plan36")
from inventory import ENGINE, SIDE, TOWER

owner = {}
for cls, module in TOWER:
    for node in ast.walk(ast.parse((ENGINE / module).read_text())):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    owner.setdefault(item.name, cls)
edges = collections.defaultdict(collections.Counter)
for cls, module, *rest in TOWER + [(c, m) for c, m, _ in SIDE]:
    selves = {"self"} if not rest and cls in dict(TOWER) else {"s", "self"}
    tree = ast.parse((ENGINE / module).read_text())
    roots = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls] or [tree]
    for root in roots:
        for node in ast.walk(root):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in selves
            ):
                o = owner.get(node.attr)
                if o and o != cls:
                    edges[cls][f"{o}.{node.attr}"] += 1
for cls in [c for c, _ in TOWER] + ["LinkHost", "(functions)"]:
    if edges[cls]:
        print(f"{cls}: " + ", ".join(f"{k}" for k in sorted(edges[cls])))
