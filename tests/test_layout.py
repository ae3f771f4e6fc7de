"""The code's layout holds: no module of trainer/ imports another that imports it back (lazy
imports inside functions included), few modules at the top, and every part says what it is."""

from __future__ import annotations

import ast
from pathlib import Path

TRAINER = Path(__file__).resolve().parent.parent / "trainer"


def _module_name(path: Path) -> str:
    parts = path.relative_to(TRAINER.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    modules = {_module_name(path): path for path in TRAINER.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([node.module] if node.module else [])])
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_one_that_imports_it_back() -> None:
    assert _cycles(_import_graph()) == []


def test_the_cycle_finder_sees_a_lazy_loop() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_the_graph_counts_imports_inside_functions() -> None:
    graph = _import_graph()
    # practice imports the session only when it runs (so --help stays fast)
    assert "trainer.app.session" in graph["trainer.app.commands.practice"]


def test_at_most_six_modules_at_the_top() -> None:
    top = sorted(path.name for path in TRAINER.glob("*.py"))
    assert len(top) <= 6, top


def test_every_part_says_what_it_is() -> None:
    parts = [path.parent for path in TRAINER.glob("*/__init__.py")]
    assert len(parts) >= 5
    for part in parts:
        doc = ast.get_docstring(ast.parse((part / "__init__.py").read_text(encoding="utf-8")))
        assert doc and len(doc.split()) >= 12, f"{part.name}/__init__.py needs a docstring"
