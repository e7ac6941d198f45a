"""The packages' imports run one way (docs/design.md#packages): statlas -> servers ->
{pruner, optimizer, collectors} -> metastore. Read from every import statement of the
source, function-level ones included, so a cycle cannot hide inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
# what each package may import of the project's packages
ALLOWED = {
    "statlas": {"statlas", "servers", "pruner", "optimizer", "collectors", "metastore"},
    "servers": {"servers", "pruner", "optimizer", "collectors", "metastore"},
    "pruner": {"pruner", "optimizer", "collectors", "metastore"},
    "optimizer": {"optimizer", "metastore"},
    "collectors": {"collectors", "metastore"},
    "metastore": {"metastore", "migrations"},
    "migrations": {"migrations", "metastore"},
}


def imported_packages(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names & set(ALLOWED)


def test_imports_run_one_way() -> None:
    wrong = [
        f"{path.relative_to(REPOSITORY)} imports {package}"
        for owner, allowed in ALLOWED.items()
        for path in sorted((REPOSITORY / owner).rglob("*.py"))
        for package in sorted(imported_packages(path) - allowed)
    ]
    assert wrong == []
