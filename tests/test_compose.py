"""compose.yaml is valid: checked with Debian's docker-compose, which needs no engine."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_compose_file_is_valid() -> None:
    tool = shutil.which("docker-compose")
    if tool is None:
        if os.environ.get("CI"):
            pytest.fail("docker-compose is missing (make tools installs it)", pytrace=False)
        pytest.skip("docker-compose is not installed")
    for args in (["config", "--quiet"], ["config", "--services"]):
        result = subprocess.run(
            [tool, "-f", str(ROOT / "compose.yaml"), *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
    assert set(result.stdout.split()) >= {"postgres", "migrate"}
