"""`statlas daemon` puts Arrow's native default pool on the system allocator before pyarrow
loads (issue 22, servers.process_memory.arrow_on_system_allocator): Acero's group_by on a
sample's columns then allocates nothing from mimalloc, whose freed pages would stay with the
daemon beside its cache (~30 MB over TPC-H's latency set). In a fresh interpreter, through
the command itself (`statlas daemon`, stopped by its port check after its start-up steps)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from servers.process_memory import ARROW_POOL_VARIABLE

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, sys
from statlas.cli import main

# the daemon's own command, stopped by its port check once its start-up steps have run
code = main(["--db", "sqlite:///unused.db", "daemon", "--port", "70000"])
import pyarrow as pa
from servers.process_memory import tune_allocator

tune_allocator()
table = pa.table({"k": [1, 2, 3] * 10_000, "v": list(range(30_000))})
table.group_by("k").aggregate([("v", "sum")])  # Acero
mimalloc_bytes = pa.mimalloc_memory_pool().max_memory()
print(json.dumps([code, "servers.daemon" in sys.modules, mimalloc_bytes]))
"""


def test_the_daemon_puts_arrow_on_the_system_allocator(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != ARROW_POOL_VARIABLE}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    code, daemon_loaded, mimalloc_bytes = json.loads(done.stdout.strip().splitlines()[-1])
    assert code != 0  # the port check refused 70000
    assert daemon_loaded  # the daemon's modules, pyarrow among them, were loaded by then
    assert mimalloc_bytes == 0
