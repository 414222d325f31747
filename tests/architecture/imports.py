"""The import graph of the lab's packages, read from the source (no module is imported).

Edges are every `import` and `from ... import` of a module, at module level or inside a
function (a lazy import still ties two modules together), except those under
`if TYPE_CHECKING:`, which never run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# Lowest first: a module may import its own layer or a lower one (DESIGN §3).
LAYERS = ("qalab", "generator", "judge", "runs")


@dataclass(frozen=True)
class Violation:
    kind: str  # "upward" or "cycle"
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path) -> dict[str, Path]:
    """Every module of the layered packages under `root` (migrations excluded)."""
    found: dict[str, Path] = {}
    for package in LAYERS:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" not in path.parts:
                found[_module_name(root, path)] = path
    return found


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", "")
            if name == "TYPE_CHECKING":
                skipped |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skipped


def _imported(module: str, is_package: bool, tree: ast.AST, known: set[str]) -> Iterator[str]:
    skipped = _type_checking_nodes(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                child = f"{target}.{alias.name}"
                yield child if child in known else target


def import_graph(root: Path) -> dict[str, set[str]]:
    """module -> the lab modules it imports (nearest known module of each imported name)."""
    found = modules(root)
    known = set(found)
    graph: dict[str, set[str]] = {}
    for name, path in found.items():
        targets: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for target in _imported(name, path.name == "__init__.py", tree, known):
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                targets.add(target)
        graph[name] = targets
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        result.append(sorted(component))
    return result


def violations(root: Path) -> list[Violation]:
    """Upward imports across layers, and import cycles between modules."""
    graph = import_graph(root)
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    found = [
        Violation("upward", f"{source} imports {target}")
        for source, targets in sorted(graph.items())
        for target in sorted(targets)
        if rank[target.split(".")[0]] > rank[source.split(".")[0]]
    ]
    found += [Violation("cycle", " <-> ".join(c)) for c in _cycles(graph)]
    return found
