"""statlas's emitted SQL of TPC-DS queries run on DuckDB against the query as written: the
check the plans report runs before Spark (docs/benchmarks/2026-11-26-tpcds-plans.md), without
Spark. Each query is planned over the TPC-DS metastore (benchmarks/tpcds_statlas.py; read,
not collected), emitted as Spark SQL, transpiled to DuckDB's dialect by sqlglot and run on
DATA/tpcds-sfSCALE/tpcds.duckdb beside the extension's own text of the query; the rows are
compared as plans.py compares Spark's (`plans_runs.difference`: sorted, floats to 1e-6). Where
they differ under a final LIMIT, both texts are run again without it (a tie cut otherwise).

    python benchmarks/emitted_duckdb.py [--scale 1] [--queries q14,q64]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import sqlglot
from plans_runs import difference
from tpcds_queries import duckdb_connection, duckdb_queries, queries, without_final_limit
from tpcds_statlas import default_url

from metastore import Metastore
from optimizer.estimate.sources import MetastoreSource
from optimizer.physical.api import emit, plan_query

DATA = Path(__file__).resolve().parent / ".data"


def check(connection: object, source: MetastoreSource, engine: object, name: str) -> str | None:
    """Why the emitted text's rows differ from the query's, or None."""
    emitted = emit(plan_query(engine, queries()[name], source=source))  # type: ignore[arg-type]
    mine = sqlglot.transpile(emitted, read="spark", write="duckdb")[0]
    theirs = duckdb_queries()[name]
    run = connection.execute  # type: ignore[attr-defined]
    found = difference(run(mine).fetchall(), run(theirs).fetchall())
    if found is None:
        return None
    unlimited = without_final_limit(mine, "duckdb"), without_final_limit(theirs, "duckdb")
    if unlimited == (mine, theirs):
        return found
    again = difference(run(unlimited[0]).fetchall(), run(unlimited[1]).fetchall())
    return None if again is None else found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", default="1")
    parser.add_argument("--queries", default=None, help="e.g. q14,q64 (default: all 99)")
    args = parser.parse_args()
    names = args.queries.split(",") if args.queries else list(queries())
    metastore = Metastore(default_url(DATA, args.scale))
    source = MetastoreSource(metastore.engine, memo=True)
    connection = duckdb_connection(DATA / f"tpcds-sf{args.scale}" / "tpcds.duckdb", True)
    failed = []
    for name in names:
        began = time.perf_counter()
        found = check(connection, source, metastore.engine, name)
        print(f"{name}: {'same rows' if found is None else found} "
              f"({time.perf_counter() - began:.1f} s)", flush=True)  # fmt: skip
        if found is not None:
            failed.append(name)
    print(f"{len(names) - len(failed)} of {len(names)} returned the query's rows; differ: {failed}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
