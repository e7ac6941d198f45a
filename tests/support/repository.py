"""The repository's files the tests read: its root, the tests' data files, compose.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


def compose() -> dict[str, Any]:
    import yaml  # PyYAML comes with the dev extra (schemathesis)

    loaded: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text())
    return loaded
