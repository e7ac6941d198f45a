"""Partition lookups on a table of 1,000,000 partitions, statlas beside a hand-tuned table.

One table with two keys, dt (date, ~2,700 days) x region (string, 370 values), registered
from an existing listing. Then >= 50 lookups of each shape through the Python API and the
CLI, and the bare query a hand-tuned table needs (one wide table, composite index on
(dt, region), `dt = ANY(%s) AND region = ANY(%s)` through psycopg2 / sqlite3), on the
same random values, in the same run:

  (a) one date and one region                    (1 partition)
  (b) 1,000 dates x 10 regions                   (10,000 partitions)
  (c) 10,000 (date, region) tuples               (10,000 partitions, no cross product)
  (d) a 30-day range x all regions               (~11,000 partitions)
  (e) 100,000 dates, mostly absent, x 1 region

Usage: python benchmarks/partition_lookup.py [--partitions N] [--runs 50] [--cli-runs 50]
       [--backends postgres,sqlite] [--pg-url URL]
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg2
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from metastore import Metastore, PartitionQuery, TupleList
from metastore.catalog.discovery import Column, DiscoveredDataset, DiscoveredPartition
from metastore.catalog.tables import register_listing

DEFAULT_PG = "postgresql+psycopg2://postgres@127.0.0.1:5432/test"
SCHEMA = "bench_lookup"
FIRST_DAY = dt.date(2017, 1, 1)
REGIONS = 370
TABLE = "events"
SINGLE_LOOKUPS_PER_RUN = 20
STATLAS = str(Path(sys.executable).parent / "statlas")


@dataclass
class Shape:
    name: str
    query: PartitionQuery  # the API form
    cli: list[str]  # the CLI's arguments after the table name
    bare: tuple[str, tuple[Any, ...]]  # the hand-tuned SQL (psycopg2 style) and parameters


def regions() -> list[str]:
    return [f"region-{i:03d}" for i in range(REGIONS)]


def build_listing(days: int, location: str = "/lake/events") -> DiscoveredDataset:
    partitions = []
    for d in range(days):
        day = (FIRST_DAY + dt.timedelta(d)).isoformat()
        for region in regions():
            name = f"dt={day}/region={region}"
            partitions.append(
                DiscoveredPartition(name, (day, region), f"{location}/{name}", 4, 4 << 20, 1)
            )
    columns = [Column("user_id", "bigint"), Column("event", "string")]
    return DiscoveredDataset(location, "parquet", ["dt", "region"], partitions, "x", columns)


def make_shapes(days: int, runs: int, rng: random.Random, workdir: Path) -> dict[str, list[Shape]]:
    all_days = [FIRST_DAY + dt.timedelta(d) for d in range(days)]
    names = regions()
    shapes: dict[str, list[Shape]] = {k: [] for k in "abcde"}
    for _ in range(runs * SINGLE_LOOKUPS_PER_RUN):  # cheap: measured on more samples
        day, region = rng.choice(all_days), rng.choice(names)
        shapes["a"].append(
            Shape(
                "a",
                PartitionQuery((("dt", [day]), ("region", [region]))),
                ["--in", f"dt={day}", "--in", f"region={region}"],
                ("dt = ANY(%s) AND region = ANY(%s)", ([day], [region])),
            )
        )
    for run in range(runs):
        some_days, some_regions = rng.sample(all_days, min(1000, days)), rng.sample(names, 10)
        path = workdir / f"b{run}.txt"
        path.write_text("\n".join(d.isoformat() for d in some_days))
        shapes["b"].append(
            Shape(
                "b",
                PartitionQuery((("dt", some_days), ("region", some_regions))),
                ["--in-file", f"dt={path}", "--in", "region=" + ",".join(some_regions)],
                ("dt = ANY(%s) AND region = ANY(%s)", (some_days, some_regions)),
            )
        )

        pair_set: set[tuple[dt.date, str]] = set()
        while len(pair_set) < 10_000:
            pair_set.add((rng.choice(all_days), rng.choice(names)))
        pairs = sorted(pair_set)
        rng.shuffle(pairs)
        path = workdir / f"c{run}.jsonl"
        path.write_text("\n".join(json.dumps([d.isoformat(), r]) for d, r in pairs))
        shapes["c"].append(
            Shape(
                "c",
                PartitionQuery(tuples=(TupleList(("dt", "region"), [list(p) for p in pairs]),)),
                ["--tuples", f"dt,region={path}"],
                (
                    "(dt, region) IN (SELECT * FROM unnest(%s::date[], %s::text[]))",
                    ([p[0] for p in pairs], [p[1] for p in pairs]),
                ),
            )
        )

        start = rng.randrange(0, days - 30)
        low, high = all_days[start], all_days[start + 29]
        where = f"dt BETWEEN '{low}' AND '{high}'"
        shapes["d"].append(
            Shape(
                "d",
                PartitionQuery(where=where),
                ["--where", where],
                ("dt BETWEEN %s AND %s", (low, high)),
            )
        )

        wide_set: set[dt.date] = set()
        while len(wide_set) < 100_000:  # 100,000 distinct dates over ~820 years: mostly absent
            wide_set.add(FIRST_DAY + dt.timedelta(rng.randrange(-150_000, 150_000)))
        wide = sorted(wide_set)
        rng.shuffle(wide)
        region = rng.choice(names)
        path = workdir / f"e{run}.txt"
        path.write_text("\n".join(d.isoformat() for d in wide))
        shapes["e"].append(
            Shape(
                "e",
                PartitionQuery((("dt", wide), ("region", [region]))),
                ["--in-file", f"dt={path}", "--in", f"region={region}"],
                ("dt = ANY(%s) AND region = ANY(%s)", (wide, [region])),
            )
        )
    return shapes


class Bare:
    """The hand-tuned table: one wide table, composite index on (dt, region)."""

    def __init__(self, backend: str, url: str, listing: DiscoveredDataset) -> None:
        self.backend = backend
        if backend == "postgres":
            params = make_url(url).translate_connect_args(username="user", database="dbname")
            self.conn: Any = psycopg2.connect(**params, options=f"-csearch_path={SCHEMA}")
            self.conn.autocommit = True
            cur = self.conn.cursor()
            cur.execute(
                'CREATE TABLE bare (name text, dt date, region text COLLATE "C", location text)'
            )
            import io

            buffer = io.StringIO(
                "".join(
                    f"{p.name}\t{p.raw_values[0]}\t{p.raw_values[1]}\t{p.location}\n"
                    for p in listing.partitions
                )
            )
            cur.copy_expert("COPY bare FROM STDIN", buffer)
            cur.execute("CREATE INDEX bare_dt_region ON bare (dt, region)")
            cur.execute("CREATE INDEX bare_region ON bare (region)")
            cur.execute("ANALYZE bare")
        else:
            self.conn = sqlite3.connect(make_url(url).database or "")
            self.conn.execute("CREATE TABLE bare (name text, dt text, region text, location text)")
            self.conn.executemany(
                "INSERT INTO bare VALUES (?, ?, ?, ?)",
                ((p.name, *p.raw_values, p.location) for p in listing.partitions),
            )
            self.conn.execute("CREATE INDEX bare_dt_region ON bare (dt, region)")
            self.conn.execute("CREATE INDEX bare_region ON bare (region)")
            self.conn.execute("ANALYZE")
            self.conn.commit()

    def run(self, shape: Shape) -> int:
        where, params = shape.bare
        if self.backend == "postgres":
            cur = self.conn.cursor()
            cur.execute(f"SELECT name, dt, region, location FROM bare WHERE {where}", params)
            return len(cur.fetchall())
        return len(self.conn.execute(*self._sqlite(shape)).fetchall())

    @staticmethod
    def _sqlite(shape: Shape) -> tuple[str, tuple[Any, ...]]:
        """The same query for SQLite: lists as one JSON parameter through json_each."""
        select = "SELECT name, dt, region, location FROM bare WHERE "
        params = shape.bare[1]
        if shape.name == "d":
            return select + "dt BETWEEN ? AND ?", tuple(str(p) for p in params)
        if shape.name == "c":
            pairs = json.dumps([[str(d), r] for d, r in zip(*params, strict=True)])
            return (
                select + "(dt, region) IN (SELECT json_extract(value, '$[0]'), "
                "json_extract(value, '$[1]') FROM json_each(?))",
                (pairs,),
            )
        days = json.dumps([str(d) for d in params[0]])
        return (
            select + "dt IN (SELECT value FROM json_each(?)) AND region IN "
            "(SELECT value FROM json_each(?))",
            (days, json.dumps(params[1])),
        )

    def close(self) -> None:
        self.conn.close()


def settle(backend: str, url: str) -> None:
    """Let the bulk loads of both tables settle before timing, so that neither side meets
    autovacuum (PostgreSQL) or a WAL checkpoint (SQLite) in the middle of a lookup."""
    if backend == "postgres":
        params = make_url(url).translate_connect_args(username="user", database="dbname")
        conn = psycopg2.connect(**params, options=f"-csearch_path={SCHEMA}")
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute(f"SELECT 'partitions_' || id FROM catalog_tables WHERE name = '{TABLE}'")
            (partitions_table,) = cur.fetchone()
            for table in (partitions_table, "bare"):
                cur.execute(f"VACUUM (ANALYZE) {table}")
        conn.close()
    else:
        conn_sqlite = sqlite3.connect(make_url(url).database or "")
        conn_sqlite.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn_sqlite.close()


def timed(function: Callable[[], int]) -> tuple[float, int]:
    started = time.perf_counter()
    count = function()
    return time.perf_counter() - started, count


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def prepare_backend(backend: str, args: argparse.Namespace, workdir: Path) -> str:
    if backend == "postgres":
        admin = create_engine(args.pg_url)
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE"))
            conn.execute(text(f"CREATE SCHEMA {SCHEMA}"))
        admin.dispose()
        url = make_url(args.pg_url).update_query_dict({"options": f"-csearch_path={SCHEMA}"})
        return url.render_as_string(hide_password=False)
    return f"sqlite:///{workdir / 'bench.db'}"


def bench_backend(
    backend: str,
    args: argparse.Namespace,
    listing: DiscoveredDataset,
    shapes: dict[str, list[Shape]],
    workdir: Path,
) -> list[dict[str, Any]]:
    url = prepare_backend(backend, args, workdir)
    ms = Metastore(url)
    ms.upgrade()
    print(f"[{backend}] registering {len(listing.partitions):,} partitions ...", flush=True)
    report = register_listing(ms.engine, TABLE, listing)
    registration = report.seconds["writing"]
    print(f"[{backend}] registered in {registration:.1f} s; loading the bare table ...", flush=True)
    bare = Bare(backend, url, listing)
    settle(backend, url)
    rows: list[dict[str, Any]] = [
        {
            "backend": backend,
            "shape": "register",
            "partitions": report.partitions,
            "seconds": registration,
        }
    ]
    env = {**os.environ, "STATLAS_DB_URL": url}
    for key, instances in shapes.items():
        for shape in instances[:3]:  # warm caches (and lazy imports) on both sides alike
            ms.lookup(TABLE, shape.query)
            bare.run(shape)
        api, plain, counts = [], [], []
        for shape in instances:
            seconds, count = timed(lambda s=shape: len(ms.lookup(TABLE, s.query)))
            bare_seconds, bare_count = timed(lambda s=shape: bare.run(s))
            if count != bare_count:
                raise SystemExit(f"shape {key}: statlas found {count}, the bare query {bare_count}")
            api.append(seconds)
            plain.append(bare_seconds)
            counts.append(count)
        cli: list[float] = []
        for shape in instances[: args.cli_runs]:
            seconds, _code = timed(
                lambda s=shape: (
                    subprocess.run(
                        [STATLAS, "partitions", TABLE, *s.cli, "--json"],
                        env=env,
                        stdout=subprocess.DEVNULL,
                        check=True,
                    ).returncode
                )
            )
            cli.append(seconds)
        rows.append(
            {
                "backend": backend,
                "shape": key,
                "partitions": statistics.mean(counts),
                "lookups": len(api),
                "api_p50": statistics.median(api),
                "api_p99": percentile(api, 0.99),
                "bare_p50": statistics.median(plain),
                "bare_p99": percentile(plain, 0.99),
                "cli_p50": statistics.median(cli) if cli else None,
                "cli_p99": percentile(cli, 0.99) if cli else None,
            }
        )
        print(f"[{backend}] shape {key} done", flush=True)
    bare.close()
    ms.dispose()
    return rows


def report(rows: list[dict[str, Any]]) -> None:
    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value * 1000:,.1f}"

    print()
    print(
        "| backend | shape | partitions | lookups | API p50 ms | API p99 ms | bare p50 ms "
        "| bare p99 ms | API/bare p99 | CLI p50 ms | CLI p99 ms | target | met |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for row in rows:
        if row["shape"] in ("register", "discover"):
            ok = row["seconds"] <= 60 if row["shape"] == "register" else None
            met = "-" if ok is None or row["backend"] != "postgres" else ("yes" if ok else "NO")
            label = (
                "register (listing taken)"
                if row["shape"] == "register"
                else ("list a real directory tree + register")
            )
            print(
                f"| {row['backend']} | {label} | {row['partitions']:,} | 1 | "
                f"{row['seconds']:.1f} s | | | | | | | "
                f"{'<= 60 s (PostgreSQL)' if ok is not None else ''} | "
                f"{met} |"
            )
            continue
        ratio = row["api_p99"] / row["bare_p99"]
        if row["shape"] == "a":
            target, ok = "p99 <= 5 ms", row["api_p99"] <= 0.005
        else:
            target, ok = "p99 <= 1.5x bare", ratio <= 1.5
        print(
            f"| {row['backend']} | {row['shape']} | {row['partitions']:,.0f} | {row['lookups']} | "
            f"{ms(row['api_p50'])} | {ms(row['api_p99'])} | {ms(row['bare_p50'])} | "
            f"{ms(row['bare_p99'])} | {ratio:.2f} | {ms(row['cli_p50'])} | "
            f"{ms(row['cli_p99'])} | {target} | {'yes' if ok else 'NO'} |"
        )


def bench_discovery(backend: str, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """List and register a real directory tree of --real-dirs partitions (one file each)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = workdir / "tree"
    days = max(1, args.real_dirs // REGIONS)
    sample = pa.table({"user_id": pa.array([1], pa.int64()), "event": ["x"]})
    for d in range(days):
        day = (FIRST_DAY + dt.timedelta(d)).isoformat()
        for i, region in enumerate(regions()):
            directory = root / f"dt={day}" / f"region={region}"
            directory.mkdir(parents=True)
            if d == 0 and i == 0:
                pq.write_table(sample, directory / "part-00000.parquet")
            else:
                (directory / "part-00000.parquet").write_bytes(b"")
    url = prepare_backend(backend, args, workdir)
    ms = Metastore(url)
    ms.upgrade()
    report = ms.register_table("tree", str(root))
    ms.dispose()
    return {
        "backend": backend,
        "shape": "discover",
        "partitions": report.partitions,
        "seconds": report.seconds["total"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--cli-runs", type=int, default=50)
    parser.add_argument("--backends", default="postgres,sqlite")
    parser.add_argument("--pg-url", default=os.environ.get("STATLAS_TEST_DB_URL", DEFAULT_PG))
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument(
        "--real-dirs",
        type=int,
        default=100_000,
        help="also list and register a real tree of this many directories",
    )
    args = parser.parse_args()
    days = max(31, round(args.partitions / REGIONS))
    listing = build_listing(days)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="statlas-bench-") as tmp:
        workdir = Path(tmp)
        shapes = make_shapes(days, args.runs, random.Random(args.seed), workdir)
        # the workload holds millions of objects: keep the collector from walking them in
        # the middle of a timed lookup, on either side
        gc.collect()
        gc.freeze()
        for backend in args.backends.split(","):
            rows += bench_backend(backend.strip(), args, listing, shapes, workdir)
        if args.real_dirs:
            rows.append(bench_discovery(args.backends.split(",")[0].strip(), args, workdir))
    print(
        f"\n{len(listing.partitions):,} partitions ({days} days x {REGIONS} regions), "
        f"{args.runs} lookups per shape through the API, {args.cli_runs} through the CLI"
    )
    report(rows)


if __name__ == "__main__":
    main()
