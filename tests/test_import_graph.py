"""The package's import graph: no cycles, and rules depend only on the contract and the shape algebra."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: Package name -> folder, as setup.py maps them.
ROOTS = {"opspec": "opspec", "opspec.codegen": "codegen", "opspec.runtime": "runtime", "opspec.generated": "generated"}


def _modules() -> dict[str, Path]:
    found = {}
    for package, folder in ROOTS.items():
        for path in (REPO / folder).rglob("*.py"):
            if "__pycache__" in path.parts or (package == "opspec.generated" and path.name != "__init__.py"):
                continue
            parts = path.relative_to(REPO / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


def _type_only(tree: ast.Module) -> set[int]:
    """The nodes under ``if TYPE_CHECKING:``: imports a type checker reads, which never run."""
    return {id(inner) for node in ast.walk(tree)
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
            for statement in node.body for inner in ast.walk(statement)}


def _imports(path: Path, name: str, modules: dict[str, Path]) -> set[str]:
    """Every opspec module ``path`` imports when it runs, at module level or inside functions."""
    targets: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only = _type_only(tree)
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                full = f"{base}.{alias.name}"
                targets.add(full if full in modules else base)
    return {t for t in targets if t in modules and t != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(path, name, modules) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _is_package_of(package: str, module: str) -> bool:
    return module.startswith(package + ".")


def test_no_import_cycles():
    graph = _graph()
    # A package's __init__ that re-exports its submodules is not a cycle with them.
    pruned = {name: {t for t in targets if not _is_package_of(t, name) and not _is_package_of(name, t)}
              for name, targets in graph.items()}
    assert _cycles(pruned) == []


def test_rules_import_only_the_contract_and_the_shape_algebra():
    allowed = ("opspec.runtime.contract", "opspec.runtime.shape", "opspec.runtime.rules")
    for name, targets in _graph().items():
        if name.startswith("opspec.runtime.rules"):
            bad = {t for t in targets if not t.startswith(allowed)}
            assert not bad, f"{name} imports {sorted(bad)}"


def test_the_contract_does_not_import_the_engine_or_rules():
    # onnx_compat is a leaf that imports nothing of opspec (it gives InferenceError onnx's base);
    # kinds is a leaf of the enums the contract shares with the schema.
    allowed = ("opspec.runtime.contract", "opspec.runtime.shape", "opspec.runtime.onnx_compat",
               "opspec.runtime.kinds")
    leaves = [name for name in allowed if not name.startswith(("opspec.runtime.contract", "opspec.runtime.shape"))]
    graph = _graph()
    assert all(not graph[leaf] for leaf in leaves), {leaf: graph[leaf] for leaf in leaves}

    for name, targets in graph.items():
        if name.startswith("opspec.runtime.contract"):

            assert all(t.startswith(allowed) for t in targets), name
