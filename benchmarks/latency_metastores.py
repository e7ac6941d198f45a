"""statlas's command line for benchmarks/latency.py, and the metastores it builds with it:
one per set and database (a SQLite file or a PostgreSQL schema), upgraded, registered and
collected incrementally."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from latency_workload import DATA


def statlas_command() -> list[str]:
    """The `statlas` console script of this interpreter's environment."""
    beside = Path(sys.executable).parent / "statlas"
    found = str(beside) if beside.exists() else shutil.which("statlas")
    if found is None:
        raise SystemExit("the `statlas` command is not installed (make install)")
    return [found]


def child_env() -> dict[str, str]:
    """The environment of statlas's processes: no token (the daemon would want it), the
    metastore named by --db only."""
    env = dict(os.environ)
    env.pop("STATLAS_API_TOKEN", None)
    env.pop("STATLAS_DB_URL", None)
    return env


def run_statlas(
    url: str, *args: str, check: bool = True, stream: bool = False
) -> subprocess.CompletedProcess[str]:
    """`statlas --db URL ARGS...`; a failure (with `check`) stops the benchmark with its
    stderr. `stream` lets stderr through (collect's progress lines)."""
    command = [*statlas_command(), "--db", url, *args]
    done = subprocess.run(
        command,
        env=child_env(),
        text=True,
        stdout=subprocess.PIPE,
        stderr=None if stream else subprocess.PIPE,
    )
    if check and done.returncode != 0:
        raise SystemExit(
            f"`statlas {' '.join(args[:3])} ...` failed ({done.returncode}): "
            f"{(done.stderr or '').strip()[-2000:]}"
        )
    return done


def json_lines(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a command's output, one a line (other lines skipped)."""
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                found.append(json.loads(line))
    return found


@dataclass
class Target:
    """One set on one database: its metastore and its queries."""

    set: str
    db: str
    url: str
    tables: dict[str, Path]
    queries: dict[str, str]
    setup: dict[str, Any] = field(default_factory=dict)


def sqlite_path(name: str) -> Path:
    return DATA / f"latency-{name}.db"


def pg_schema(name: str) -> str:
    return "latency_" + "".join(c if c.isalnum() else "_" for c in name.lower())


def metastore_url(db: str, name: str, pg_url: str) -> str:
    """The URL of the set's metastore: a SQLite file, or a PostgreSQL schema of its own
    (search_path, as tests/support/databases.py does)."""
    if db == "sqlite":
        return f"sqlite:///{sqlite_path(name)}"
    from sqlalchemy.engine import make_url

    url = make_url(pg_url).update_query_dict({"options": f"-csearch_path={pg_schema(name)}"})
    return url.render_as_string(hide_password=False)


def prepare_database(db: str, name: str, pg_url: str, rebuild: bool) -> None:
    """The empty place of the set's metastore: the SQLite file's directory, or the schema
    (created if missing; dropped first with --rebuild, as is the SQLite file)."""
    if db == "sqlite":
        path = sqlite_path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        if rebuild:
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        return
    from sqlalchemy import create_engine, text

    admin = create_engine(pg_url)
    try:
        with admin.begin() as conn:
            if rebuild:
                conn.execute(text(f"DROP SCHEMA IF EXISTS {pg_schema(name)} CASCADE"))
            conn.execute(text(f"CREATE SCHEMA IF NOT EXISTS {pg_schema(name)}"))
    finally:
        admin.dispose()


def build_metastore(target: Target, name: str, args: argparse.Namespace) -> None:
    """Upgrade, register what is not registered yet, collect incrementally (CLI)."""
    began = time.perf_counter()
    prepare_database(target.db, name, args.pg_url, args.rebuild)
    run_statlas(target.url, "db", "upgrade")
    listed = json.loads(run_statlas(target.url, "table", "list", "--json").stdout or "[]")
    registered = {t["name"] for t in listed}
    for table, path in target.tables.items():
        if table not in registered:
            run_statlas(target.url, "table", "register", table, "--path", str(path), "--json")
    target.setup["register_seconds"] = time.perf_counter() - began
    began = time.perf_counter()
    collected = run_statlas(
        target.url, "collect", "--all", "--master", args.master, "--json", stream=True
    )
    target.setup["collect_seconds"] = time.perf_counter() - began
    reports = json_lines(collected.stdout)
    target.setup["collect"] = reports
    scanned = sum(int(r.get("partitions_scanned", 0)) for r in reports)
    skipped = sum(int(r.get("partitions_skipped", 0)) for r in reports)
    print(
        f"  {target.set} on {target.db}: registered in {target.setup['register_seconds']:.1f} s; "
        f"collected in {target.setup['collect_seconds']:.1f} s ({scanned:,} partitions "
        f"scanned, {skipped:,} unchanged)",
        flush=True,
    )
