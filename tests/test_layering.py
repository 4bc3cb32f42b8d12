"""DESIGN.md's layering as a contract: server -> planner -> storage; sql used by server and planner."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# package -> top-level project packages it must never import
FORBIDDEN = {
    "storage": {"server", "planner", "sql"},
    "sql": {"server", "planner", "storage"},
    "planner": {"server"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_respect_layering(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"no sources found for {package}"
    offenders = [
        f"{path.relative_to(ROOT)} imports {sorted(bad)}"
        for path in files
        if (bad := _imports(path) & FORBIDDEN[package])
    ]
    assert not offenders, "layering violations:\n" + "\n".join(offenders)
