"""Imports only point down (docs/design.md, "Layout and imports"): every module of zoo imports
zoo's parts of its own level or lower, the parts of one level import each other without a
cycle, and no module imports a private name from another package. The levels are read from
the design document, so that the rule lives in one place."""

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ZOO = REPO / "zoo"
EXEMPT = {"__init__", "__main__", "testing"}  # the package's own start-up, tests' helpers


def design_levels():
    """{part: level} for every `zoo/<part>` the numbered list of docs/design.md names (each
    in one level only)."""
    text = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    section = text.split("## Layout and imports", 1)[1].split("\n## ", 1)[0]
    levels = {}
    for number, body in re.findall(
        r"^(\d)\. (.*?)(?=^\d\. |^`zoo/testing|\Z)", section, re.M | re.S
    ):
        for part in re.findall(r"`zoo/(\w+)(?:\.py|/)`", body):
            assert levels.get(part, int(number)) == int(number), f"{part} in two levels"
            levels[part] = int(number)
    return levels


def zoo_imports(path):
    """(part imported, names imported, module path) for every zoo import of a file, those
    inside functions included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if parts[0] != "zoo":
                continue
            names = [alias.name for alias in node.names]
            if len(parts) == 1:  # from zoo import models, layers
                found += [(name, [], [name]) for name in names]
            else:
                found.append((parts[1], names, parts[1:]))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "zoo" and len(parts) > 1:
                    found.append((parts[1], [], parts[1:]))
    return found


def part_of(path):
    return path.relative_to(ZOO).with_suffix("").parts[0]


def test_the_design_names_every_part_of_zoo():
    levels = design_levels()
    parts = {part_of(p) for p in ZOO.rglob("*.py")} - EXEMPT
    assert parts - set(levels) == set(), "parts missing from docs/design.md's levels"
    assert levels["constants"] == 0 and levels["layers"] == 1 and levels["cli"] == 5


def test_imports_point_down_without_cycles_or_private_names():
    levels = design_levels()
    edges, wrong = {}, []
    for path in sorted(ZOO.rglob("*.py")):
        me = part_of(path)
        for other, names, module in zoo_imports(path):
            if me in EXEMPT or other == me:
                continue
            where = f"{path.relative_to(REPO)} imports zoo.{'.'.join(module)}"
            if levels[other] > levels[me]:
                wrong.append(f"{where}: level {levels[other]} from level {levels[me]}")
            private = [n for n in [*module[1:], *names] if n.startswith("_")]
            if private:
                wrong.append(f"{where}: private {private}")
            edges.setdefault(me, set()).add(other)
    assert wrong == []

    def cycle_from(node, path):
        for nxt in sorted(edges.get(node, ())):
            if nxt in path:
                return [*path[path.index(nxt) :], nxt]
            found = cycle_from(nxt, [*path, nxt])
            if found:
                return found
        return None

    cycles = [c for c in (cycle_from(part, [part]) for part in sorted(edges)) if c]
    assert cycles == [], cycles


def test_the_server_imports_nothing_of_zoo_but_itself_and_level_0():
    """docs/design.md: zoo/server/ is handed a translator and imports none of zoo's parts
    above level 0, so it serves any object with the translator's methods."""
    levels = design_levels()
    found = [
        f"{path.relative_to(REPO)} imports zoo.{'.'.join(module)}"
        for path in sorted((ZOO / "server").rglob("*.py"))
        for other, _, module in zoo_imports(path)
        if other != "server" and levels[other] > 0
    ]
    assert found == []


def module_graph():
    """{module: the zoo modules it imports}, by dotted name ("zoo.translator.staged"; a
    package is its __init__), imports inside functions included: `from zoo.a import b`
    points to the module zoo.a.b when there is one, else to zoo.a."""
    modules = {}
    for path in ZOO.rglob("*.py"):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    edges = {}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [
                    f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules
                    else node.module
                    for a in node.names
                ]  # fmt: skip
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            found = {t for t in targets if t in modules and t != name}
            edges.setdefault(name, set()).update(found)
    return edges


def test_no_module_imports_itself_through_others():
    """No import circle between modules, within a package too (the rule above looks between
    packages only): a module that both imports and is imported by another cannot be read,
    tested or moved on its own."""
    edges = module_graph()
    assert "zoo.export" in edges["zoo.translator.output_folder"]  # the graph sees (in a function)
    done, cycles = set(), []

    def visit(node, path):
        for nxt in sorted(edges.get(node, ())):
            if nxt in path:
                cycles.append(" -> ".join([*path[path.index(nxt) :], nxt]))
            elif nxt not in done:
                visit(nxt, [*path, nxt])
        done.add(node)

    for module in sorted(edges):
        if module not in done:
            visit(module, [module])
    assert cycles == []
