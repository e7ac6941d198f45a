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


# inside metastore: each part may import the parts listed after it (docs/design.md#metastore);
# the package's own __init__ (the Metastore facade) may import any
METASTORE_PARTS = ["hive", "statistics", "catalog", "partitions", "base"]


def metastore_part(module: str) -> str:
    """`metastore.catalog.tables` -> catalog; a module directly in metastore/ -> base."""
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] in METASTORE_PARTS:
        return parts[1]
    return "base"


def imported_metastore_modules(path: Path) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "metastore":
                modules.update(f"metastore.{alias.name}" for alias in node.names)
            elif node.module.startswith("metastore."):
                modules.add(node.module)
        elif isinstance(node, ast.Import):
            modules.update(a.name for a in node.names if a.name.startswith("metastore."))
    return modules


def test_metastore_parts_import_downwards() -> None:
    wrong = []
    for path in sorted((REPOSITORY / "metastore").rglob("*.py")):
        if path == REPOSITORY / "metastore" / "__init__.py":
            continue
        module = ".".join(path.relative_to(REPOSITORY).with_suffix("").parts)
        own = METASTORE_PARTS.index(metastore_part(module))
        for imported in sorted(imported_metastore_modules(path)):
            if imported == "metastore" or imported.split(".")[1] in ("Metastore",):
                wrong.append(f"{module} imports the metastore facade")
            elif METASTORE_PARTS.index(metastore_part(imported)) < own:
                wrong.append(f"{module} imports {imported}")
    assert wrong == []
