"""`statlas daemon` puts Arrow's native default pool on the system allocator before pyarrow
loads (issue 22, metastore.process_memory.arrow_on_system_allocator): Acero's group_by on a
sample's columns then allocates nothing from mimalloc, whose freed pages would stay with the
daemon beside its cache (~30 MB over TPC-H's latency set). In a fresh interpreter, through
the command's own steps: parsing and settings load no pyarrow before the daemon's command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from metastore.process_memory import ARROW_POOL_VARIABLE

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, sys
from statlas.cli import build_parser
from statlas.settings import Settings

args = build_parser().parse_args(["--db", "sqlite:///unused.db", "daemon"])
Settings.load(db_url=args.db)
loaded_first = "pyarrow" in sys.modules
from metastore.process_memory import arrow_on_system_allocator, tune_allocator

took = arrow_on_system_allocator()
import pruner.daemon.run  # noqa: F401  (what the daemon's command imports next)
import pyarrow as pa

tune_allocator()
table = pa.table({"k": [1, 2, 3] * 10_000, "v": list(range(30_000))})
table.group_by("k").aggregate([("v", "sum")])  # Acero
print(json.dumps([loaded_first, took, pa.mimalloc_memory_pool().max_memory()]))
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
    loaded_first, took, mimalloc_bytes = json.loads(done.stdout.strip().splitlines()[-1])
    assert not loaded_first  # nothing before the daemon's command loads pyarrow
    assert took
    assert mimalloc_bytes == 0
