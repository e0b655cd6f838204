"""The version is written once, in zoo/__init__.py; the package metadata reads it there."""

import ast
import tomllib
from pathlib import Path

import zoo

REPO = Path(__file__).resolve().parents[1]


def test_the_package_metadata_reads_the_version_from_zoo():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "zoo.__version__"}


def test_zoo_version_is_a_literal_setuptools_reads_without_importing():
    tree = ast.parse((REPO / "zoo" / "__init__.py").read_text(encoding="utf-8"))
    values = [
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and [getattr(t, "id", None) for t in node.targets] == ["__version__"]
        and isinstance(node.value, ast.Constant)
    ]
    assert values == [zoo.__version__]
    assert all(part.isdigit() for part in zoo.__version__.split("."))
