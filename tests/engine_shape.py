"""Measure the engine's shape from its source (``ast`` only, nothing imported).

Used by tests/test_engine_shape.py, which pins today's figures as ratchets,
and runnable by hand from the repository root for the detail behind each
figure: ``python tests/engine_shape.py``. The measures are those of issue 36's
plan (docs/design/engine-parts-plan.md, section 1, by its ``inventory.py``):

- *link decisions*: every test of whether the scheduler has a store link
  (``self._link is None``, ``is not None``, its truthiness, through a local
  bound from it) that is not an ``assert`` (those only narrow the type), plus
  any ``isinstance(..., XBacking)``: each is a place where the memory store
  and the durable stores are two engines woven into one function;
- *the issue's grep*: ``self._link is None`` / ``is not None`` spelled out;
- *inheritance depth*: the longest chain of engine classes each inheriting the
  next (``JobScheduler`` -> ... -> ``SchedulerState`` was 10), for the engine
  and for the store link (``_engine/_link/``) apart;
- *private names per module*: the distinct private attributes a module
  touches through ``self`` or ``s`` (the scheduler, as ``LinkHost`` names it):
  what whoever changes the module must know about;
- *shared private names*: private attributes touched in more than one module
  (of the engine; of the link), the state that is reached for rather than
  passed;
- *modules over 400 lines* (the style's limit).
"""

from __future__ import annotations

import ast
import collections
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "packages/core/src/jobsched/_engine"
#: The names the scheduler goes by in engine code.
SELVES = frozenset({"self", "s"})
MAX_LINES = 400
_GREP = re.compile(r"self\._link is (not )?None")


@dataclass(frozen=True)
class Decision:
    """One place that asks whether there is a store link."""

    file: str
    line: int
    function: str
    text: str


@dataclass
class Shape:
    """The figures test_engine_shape.py pins, with what lies behind them."""

    decisions: list[Decision] = field(default_factory=list)
    grep: int = 0
    depth: int = 0
    chain: list[str] = field(default_factory=list)
    link_depth: int = 0
    link_chain: list[str] = field(default_factory=list)
    names: dict[str, set[str]] = field(default_factory=dict)
    long_modules: dict[str, int] = field(default_factory=dict)

    def most_names(self, link: bool = False) -> tuple[int, str]:
        """The largest number of private names one module touches, and where:
        in the engine (``link`` false) or in the store link."""
        return max(
            ((len(n), m) for m, n in self.names.items() if m.startswith("_link/") == link),
            default=(0, ""),
        )

    def shared(self, link: bool = False) -> list[str]:
        """Private names touched in more than one module of the engine (or of
        the store link)."""
        seen = collections.Counter(
            n for m, names in self.names.items() if m.startswith("_link/") == link for n in names
        )
        return sorted(n for n, count in seen.items() if count > 1)


def modules(where: Path = ENGINE) -> Iterator[Path]:
    """Every Python module of the engine, the link's included."""
    yield from sorted(where.rglob("*.py"))


def _name(path: Path, engine: Path) -> str:
    return path.relative_to(engine).as_posix()


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _function(node: ast.AST, up: dict[ast.AST, ast.AST]) -> ast.AST | None:
    while node in up:
        node = up[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node
    return None


def _is_link(expr: ast.AST, local_names: set[str]) -> bool:
    if (
        isinstance(expr, ast.Attribute)
        and expr.attr == "_link"
        and isinstance(expr.value, ast.Name)
    ):
        return expr.value.id in SELVES
    return isinstance(expr, ast.Name) and expr.id in local_names


def _is_backing_check(node: ast.AST) -> bool:
    """``isinstance(x, SomeBacking)`` (or a tuple naming one)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return False
    if node.func.id != "isinstance" or len(node.args) != 2:
        return False
    kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
    return any(
        (isinstance(k, ast.Name) and k.id.endswith("Backing"))
        or (isinstance(k, ast.Attribute) and k.attr.endswith("Backing"))
        for k in kinds
    )


def link_decisions(path: Path, engine: Path = ENGINE) -> list[Decision]:
    """The tests of the store link in one module, asserts left out."""
    text = path.read_text()
    lines = text.splitlines()
    tree = ast.parse(text)
    up = _parents(tree)
    # Locals bound from self._link, per function: `link = self._link; if link: ...`.
    aliases: dict[ast.AST | None, set[str]] = collections.defaultdict(set)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _is_link(node.value, set()):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    aliases[_function(node, up)].add(target.id)

    def is_link(expr: ast.AST) -> bool:
        return _is_link(expr, aliases.get(_function(expr, up), set()))

    found = []
    for node in ast.walk(tree):
        hit = False
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            right = node.comparators[0]
            hit = (
                isinstance(node.ops[0], (ast.Is, ast.IsNot))
                and isinstance(right, ast.Constant)
                and right.value is None
                and is_link(node.left)
            )
        elif isinstance(node, (ast.If, ast.IfExp, ast.While)):
            hit = is_link(node.test)
        elif isinstance(node, ast.BoolOp):
            hit = any(is_link(v) for v in node.values)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            hit = is_link(node.operand)
        else:
            hit = _is_backing_check(node)
        if hit and not isinstance(up.get(node), ast.Assert):
            function = _function(node, up)
            found.append(
                Decision(
                    _name(path, engine),
                    node.lineno,
                    getattr(function, "name", "<module>"),
                    lines[node.lineno - 1].strip(),
                )
            )
    return found


def private_names(path: Path) -> set[str]:
    """The private attributes a module touches through ``self`` or ``s``."""
    return {
        node.attr
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in SELVES
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
    }


def deepest_chain(paths: list[Path]) -> list[str]:
    """The longest chain of classes defined in ``paths``, each inheriting the
    next, from the most derived (``["JobScheduler", "Lifecycle", ...]``)."""
    bases: dict[str, list[str]] = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                named = [
                    b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases
                ]
                bases.setdefault(node.name, []).extend(named)

    chains: dict[str, list[str]] = {}

    def chain(name: str, seen: frozenset[str]) -> list[str]:
        if name not in chains:
            below = [chain(b, seen | {name}) for b in bases[name] if b in bases and b not in seen]
            chains[name] = [name, *max(below, key=len, default=[])]
        return chains[name]

    return max((chain(name, frozenset()) for name in bases), key=len, default=[])


def measure(root: Path = ENGINE) -> Shape:
    """Every figure, over the engine under ``root`` as it is on disk."""
    shape = Shape()
    engine, link = [], []
    for path in modules(root):
        (link if root / "_link" in path.parents else engine).append(path)
        shape.decisions.extend(link_decisions(path, root))
        text = path.read_text()
        shape.grep += len(_GREP.findall(text))
        shape.names[_name(path, root)] = private_names(path)
        lines = len(text.splitlines())
        if lines > MAX_LINES:
            shape.long_modules[_name(path, root)] = lines
    shape.chain = deepest_chain(engine)
    shape.depth = max(len(shape.chain) - 1, 0)
    shape.link_chain = deepest_chain(link)
    shape.link_depth = max(len(shape.link_chain) - 1, 0)
    return shape


def report(shape: Shape) -> str:
    """The figures and what lies behind them, for a person."""
    out = [
        f"link decisions: {len(shape.decisions)}",
        *(f"    {d.file}:{d.line} {d.function}: {d.text}" for d in shape.decisions),
        f"the issue's grep (self._link is (not) None): {shape.grep}",
        f"inheritance depth, engine: {shape.depth} ({' -> '.join(shape.chain)})",
        f"inheritance depth, link: {shape.link_depth} ({' -> '.join(shape.link_chain)})",
        "most private names in one module: engine {} ({}), link {} ({})".format(
            *shape.most_names(), *shape.most_names(link=True)
        ),
        *(
            f"    {len(n):3d} {m}"
            for m, n in sorted(shape.names.items(), key=lambda item: -len(item[1]))
            if n
        ),
        f"private names shared by engine modules: {len(shape.shared())}",
        f"    {' '.join(shape.shared())}",
        f"private names shared by link modules: {len(shape.shared(link=True))}",
        f"    {' '.join(shape.shared(link=True))}",
        f"modules over {MAX_LINES} lines: {len(shape.long_modules)} {shape.long_modules}",
    ]
    return "\n".join(out)


if __name__ == "__main__":
    print(report(measure()))
