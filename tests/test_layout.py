"""The house rules of cdckit's layout: no import circles, a long module says why it is kept whole, an ARCHITECTURE.md
that names real modules."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "cdckit"
#: Past this many lines a module says in its docstring why it is kept whole (a paragraph starting with
#: :data:`KEPT_WHOLE`, naming its one concept): length is a prompt to look, never a reason to cut. A module is
#: one concept, split where the concepts part, never at a count.
MOST_LINES = 600
KEPT_WHOLE = "Kept whole:"


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


#: The floors of cdckit, lowest first, each a list of packages (a package holds its modules and subpackages).
#: A module imports only from its own floor and the floors below, at the top of its text or inside a function.
#: The ground floor (``GROUND``) is every top-level module not named on a higher floor.
GROUND = "ground floor"
FLOORS: list[list[str]] = [
    [GROUND],
    ["cdckit.io"],
    ["cdckit.dialects"],
    ["cdckit.reading"],
    ["cdckit.export"],
    ["cdckit.analysis"],
    ["cdckit.samples"],
    ["cdckit.spark"],
    ["cdckit.viz"],
    ["cdckit", "cdckit.notebook", "cdckit.demo"],  # the package's face: what ``import cdckit`` names
    ["cdckit.cli"],
    ["cdckit.__main__"],
]
#: The imports allowed from a lower floor to a higher one, each inside a function and said why.
LAZY_HOOKS = {
    # a Spark frame handed to a function of any floor is written by cdckit.spark's writers, imported only
    # when a Spark frame comes, so that a pandas user never imports pyspark
    ("cdckit.engines", "cdckit.spark.export"),
}


def floor_of(module: str, floors: list[list[str]] = FLOORS) -> int:
    """The floor of ``module``: that of the longest package named on a floor that holds it; the ground floor
    for any other top-level module.

    >>> floor_of("cdckit.values"), floor_of("cdckit.io.files"), floor_of("cdckit"), floor_of("cdckit.cli.main")
    (0, 1, 9, 10)
    """
    best, found = "", 0
    for number, packages in enumerate(floors):
        for package in packages:
            holds = module == package or (package != "cdckit" and module.startswith(package + "."))
            if holds and len(package) > len(best):
                best, found = package, number
    return found


def upward_imports(graph: dict[str, set[str]], floors: list[list[str]] = FLOORS) -> list[str]:
    """Each import from a module to one on a higher floor, as ``module -> imported``, the hooks left out."""
    return sorted(
        f"{module} -> {other}"
        for module, others in graph.items()
        for other in others
        if floor_of(other, floors) > floor_of(module, floors) and (module, other) not in LAZY_HOOKS
    )


def test_the_floor_rule_finds_an_import_from_a_lower_floor_to_a_higher_one():
    graph = {"cdckit.values": {"cdckit.io.files"}, "cdckit.io.files": {"cdckit.values"},
             "cdckit.viz.report": {"cdckit.analysis.replay"}, "cdckit.reading.read": {"cdckit.analysis.keys"}}
    assert upward_imports(graph) == ["cdckit.reading.read -> cdckit.analysis.keys", "cdckit.values -> cdckit.io.files"]


def test_no_module_imports_from_a_higher_floor():
    found = upward_imports(import_graph())
    assert not found, "imports from a lower floor to a higher one (see FLOORS):\n" + "\n".join(found)


def test_the_one_hook_upward_is_imported_inside_a_function_only():
    for module, other in LAZY_HOOKS:
        path = modules()[module]
        tree = ast.parse(path.read_text())
        at_top = {node.module for node in tree.body if isinstance(node, ast.ImportFrom)} | {
            alias.name for node in tree.body if isinstance(node, ast.Import) for alias in node.names
        }
        assert not any(other.endswith(name.lstrip(".")) for name in at_top if name), (module, other)
        assert other in import_graph()[module], f"{module} no longer imports {other}: drop the hook"


def test_every_floor_names_a_package_that_exists():
    known = set(modules())
    named = [package for packages in FLOORS[1:] for package in packages]
    assert all(package in known for package in named), sorted(set(named) - known)


def kept_whole(text: str) -> bool:
    """Whether a module's docstring has a paragraph starting with :data:`KEPT_WHOLE`.

    >>> kept_whole("'''Decoding.\\n\\nKept whole: one loop.\\n'''"), kept_whole("'''Decoding. Kept whole: no.'''")
    (True, False)
    """
    doc = ast.get_docstring(ast.parse(text)) or ""
    return any(paragraph.lstrip().startswith(KEPT_WHOLE) for paragraph in re.split(r"\n\s*\n", doc))


def test_the_kept_whole_rule_reads_a_paragraph_of_the_module_docstring():
    assert kept_whole('"""One concept.\n\nKept whole: the decode loop.\n"""\nx = 1\n')
    assert not kept_whole('"""One concept."""\n# Kept whole: a comment is not the docstring\n')
    assert not kept_whole('x = 1\n"""Kept whole: not a docstring."""\n')


def test_a_module_past_600_lines_says_why_it_is_kept_whole():
    long = {name: n for name, path in modules().items() if (n := len(path.read_text().splitlines())) > MOST_LINES}
    unsaid = {name: n for name, n in long.items() if not kept_whole(modules()[name].read_text())}
    assert not unsaid, (
        f"modules over {MOST_LINES} lines that do not say why they are kept whole (a paragraph of the module "
        f"docstring starting with {KEPT_WHOLE!r}, naming the one concept; else split where the concepts part): {unsaid}"
    )


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
    analyses = {"replay", "replay_plan", "replayer", "replay_keyless", "tables", "schemas", "filters",
                "keys_inferred", "compare", "reconcile", "ordering"}
    reading = {"read", "detect", "decoding", "pairing", "workers", "source_decoding"}
    assert not (top | {p.name for p in PACKAGE.iterdir() if p.is_dir()}) & (analyses | reading)
    assert all((PACKAGE / "analysis" / f"{name}.py").exists() or (PACKAGE / "analysis" / name).is_dir()
               for name in analyses)
    assert all((PACKAGE / "reading" / f"{name}.py").exists() for name in reading)
    assert not (PACKAGE / "moved.py").exists()
    # the frame's contract, which every floor reads, is on the ground floor
    assert {"frame", "capture", "keys", "engines", "values"} <= top


def test_the_read_path_returns_to_read_py_at_most_twice():
    """``cdckit.read`` hands its work down (read.py -> read_job -> detection and decoding) and is called back from
    below at most twice: a read path that keeps returning to read.py has its rules in the wrong room."""
    import sys
    from collections import Counter

    import cdckit

    read_py = str(PACKAGE / "reading" / "read.py")
    returns: Counter[tuple[str, str]] = Counter()
    entered: list[str] = []

    def watch(frame, event, arg):
        caller = frame.f_back
        if event == "call" and frame.f_code.co_filename == read_py and caller is not None:
            entered.append(frame.f_code.co_name)
            if caller.f_code.co_filename.startswith(str(PACKAGE)) and caller.f_code.co_filename != read_py:
                if not caller.f_code.co_filename.endswith("__init__.py"):
                    returns[(caller.f_code.co_filename, frame.f_code.co_name)] += 1

    sys.setprofile(watch)
    try:
        cdckit.read(cdckit.samples.path("debezium"))
        cdckit.read(cdckit.samples.path("canal/shop"), keys={"customers": "id"})
        list(cdckit.read(cdckit.samples.path("maxwell"), chunksize=5))
    finally:
        sys.setprofile(None)
    assert "read" in entered  # the watch sees read.py
    assert sum(returns.values()) <= 2, dict(returns)
