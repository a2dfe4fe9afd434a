"""The house rules of cdckit's layout: no import circles, no long modules, an ARCHITECTURE.md that names real modules."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "cdckit"
#: The most lines a module of cdckit may have: past it, a module has more than one reason to change.
MOST_LINES = 600


def module_name(path: Path) -> str:
    """``cdckit/io/files.py`` -> ``cdckit.io.files``; a package's ``__init__.py`` is the package itself."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Every module of cdckit by its dotted name."""
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported(name: str, path: Path, known: set[str]) -> set[str]:
    """The cdckit modules that ``name`` imports anywhere in its text (at the top and inside functions alike).

    ``from . import x`` counts as importing the module ``x`` where ``x`` is one, else the package itself;
    the packages above an imported module are not counted (Python runs them first, but they are not what
    the module asked for).
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                found.add(f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source)
    return {module for module in found if module in known and module != name}


def import_graph() -> dict[str, set[str]]:
    """Each cdckit module and the cdckit modules it imports."""
    found = modules()
    return {name: imported(name, path, set(found)) for name, path in found.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other round a circle (strongly connected, Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def one_circle(graph: dict[str, set[str]], group: list[str]) -> list[str]:
    """One path round ``group``, from its first module back to it, for the message."""
    start, members = group[0], set(group)
    paths = {start: [start]}
    todo = [start]
    while todo:
        node = todo.pop(0)
        for other in sorted(graph[node] & members):
            if other == start:
                return paths[node] + [start]
            if other not in paths:
                paths[other] = paths[node] + [other]
                todo.append(other)
    return group


def test_the_circle_finder_finds_a_circle_and_a_longer_one():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": set()}
    found = circles(graph)
    assert sorted(found) == [["a", "b", "c"], ["d", "e"]]
    assert one_circle(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]


def test_imports_inside_functions_and_relative_imports_are_counted(tmp_path):
    path = tmp_path / "cdckit" / "x" / "y.py"
    path.parent.mkdir(parents=True)
    path.write_text("from . import z\nfrom ..w import name\n\ndef f():\n    from cdckit.v import other\n")
    known = {"cdckit.x.z", "cdckit.w", "cdckit.v", "cdckit.x"}
    assert imported("cdckit.x.y", path, known) == {"cdckit.x.z", "cdckit.w", "cdckit.v"}


def test_no_import_circles_among_cdckit_modules():
    graph = import_graph()
    found = [" -> ".join(one_circle(graph, group)) for group in circles(graph)]
    assert not found, "import circles:\n" + "\n".join(found)


def test_no_module_is_longer_than_600_lines():
    long = {name: n for name, path in modules().items() if (n := len(path.read_text().splitlines())) > MOST_LINES}
    assert not long, f"modules over {MOST_LINES} lines: {long}"


def test_architecture_names_only_modules_that_exist():
    text = (ROOT / "ARCHITECTURE.md").read_text()
    named = set(re.findall(r"\bcdckit/[\w/]+(?:\.py|/)", text))
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert named and not missing, f"ARCHITECTURE.md names modules that do not exist: {missing}"
    dotted = {m for m in re.findall(r"\bcdckit(?:\.[a-z_]\w*)+", text)}
    known = set(modules())
    unknown = sorted(m for m in dotted if m not in known and m.rpartition(".")[0] not in known)
    assert not unknown, f"ARCHITECTURE.md names modules that do not exist: {unknown}"


def test_every_analysis_and_read_module_lives_in_its_package():
    top = {path.stem for path in PACKAGE.glob("*.py")}
    analyses = {"replay", "replay_plan", "replayer", "replay_keyless", "tables", "schemas", "filters", "keys",
                "keys_inferred", "compare", "reconcile", "ordering"}
    reading = {"read", "detect", "decoding", "pairing", "workers", "capture", "source_decoding"}
    assert not (top | {p.name for p in PACKAGE.iterdir() if p.is_dir()}) & (analyses | reading)
    assert all((PACKAGE / "analysis" / f"{name}.py").exists() or (PACKAGE / "analysis" / name).is_dir()
               for name in analyses)
    assert all((PACKAGE / "reading" / f"{name}.py").exists() for name in reading)
    assert not (PACKAGE / "moved.py").exists()
