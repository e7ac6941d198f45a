"""A sampled table's forced keys as the metastore keeps them (forced_keys): per column, the
values whose rows every partition's row sample holds whatever its draw. The collection
chooses them (collectors/forced_keys.py) and writes them with the statistics they were
sampled with; an estimate reads them with the sample (metastore.statistics.samples.Sample.
complete): such a value's rows are all in the sample, and one the sample does not show has
none (docs/estimator.md#forced-keys)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import Connection, delete, insert, select

from metastore.models import ForcedKeyList


def read_forced_keys(conn: Connection, table_id: int) -> dict[str, tuple[int, ...]]:
    """The table's forced keys per column (sorted; none: an empty mapping)."""
    rows = conn.execute(
        select(ForcedKeyList.column_name, ForcedKeyList.key_values).where(
            ForcedKeyList.table_id == table_id
        )
    ).all()
    return {name: tuple(sorted(int(v) for v in text.split(",") if v)) for name, text in rows}


def write_forced_keys(
    conn: Connection, table_id: int, by_column: Mapping[str, Sequence[int]]
) -> None:
    """Replaces the table's forced keys by `by_column` (a column without values: none)."""
    conn.execute(delete(ForcedKeyList).where(ForcedKeyList.table_id == table_id))
    rows = [
        {
            "table_id": table_id,
            "column_name": name,
            "key_values": ",".join(str(int(v)) for v in sorted(values)),
        }
        for name, values in by_column.items()
        if values
    ]
    if rows:
        conn.execute(insert(ForcedKeyList), rows)
