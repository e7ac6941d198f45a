"""What a collection costs the metastore in bytes (issue 49): the database's growth, and what
each stored piece of a table's statistics takes, beside the table's own Parquet bytes.

  growth    SQLite: the database file's growth (its write-ahead log checkpointed first);
            PostgreSQL: the growth of pg_total_relation_size summed over the tables of the
            metastore's schema (indexes and TOAST included)
  pieces    per kind of stored piece, the bytes of its values: per partition (column_stats'
            sketches, partition_stats' row samples) and in the pre-merged blocks
            (rollup_columns, rollup_blocks' pooled samples), as length() counts them
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, text

SKETCHES = ("theta", "kll", "top_k", "top_k_items", "hll")


def parquet_bytes(directory: Path) -> int:
    """The bytes of the table's data files."""
    return sum(p.stat().st_size for p in directory.rglob("*.parquet"))


def database_bytes(engine: Engine) -> int:
    """The whole metastore's size as its database keeps it (see the module's docstring)."""
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
            database = conn.exec_driver_sql("PRAGMA database_list").all()[0][2]
        return Path(database).stat().st_size
    with engine.connect() as conn:
        return int(
            conn.execute(
                text(
                    "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                    "JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'm')"
                )
            ).scalar_one()
        )


def piece_bytes(engine: Engine, table: str) -> dict[str, int]:
    """Bytes per stored piece of `table`'s statistics: `partition <sketch>` and `block
    <sketch>` per kind of sketch, and `partition sample` and `block sample`."""
    sums = ", ".join(f"coalesce(sum(length({s})), 0)" for s in SKETCHES)
    found: dict[str, int] = {}
    with engine.connect() as conn:
        table_id = conn.execute(
            text("SELECT id FROM catalog_tables WHERE name = :name"), {"name": table}
        ).scalar_one()
        for where, relation in (("partition", "column_stats"), ("block", "rollup_columns")):
            row = conn.execute(
                text(f"SELECT {sums} FROM {relation} WHERE table_id = :id"), {"id": table_id}
            ).one()
            found.update({f"{where} {s}": int(v) for s, v in zip(SKETCHES, row, strict=True)})
        for where, relation in (("partition", "partition_stats"), ("block", "rollup_blocks")):
            found[f"{where} sample"] = int(
                conn.execute(
                    text(
                        f"SELECT coalesce(sum(length(sample)), 0) FROM {relation} "
                        "WHERE table_id = :id"
                    ),
                    {"id": table_id},
                ).scalar_one()
            )
    return found


def bytes_table(written: dict[str, int], pieces: dict[str, int], parquet: int) -> list[str]:
    """Markdown lines: each database's growth and each piece's bytes, in MB and as a share of
    the table's Parquet bytes."""
    lines = ["| written | MB | of the Parquet bytes |", "|---|---:|---:|"]
    lines.append(f"| the table's Parquet files | {parquet / 1e6:,.1f} | 100% |")
    for name, size in written.items():
        lines.append(
            f"| {name}: the database's growth | {size / 1e6:,.1f} | {size / parquet:.1%} |"
        )
    for name, size in sorted(pieces.items(), key=lambda item: -item[1]):
        if size:
            lines.append(f"| ... {name} | {size / 1e6:,.1f} | {size / parquet:.1%} |")
    return lines
