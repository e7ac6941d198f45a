"""One column-statistics record: the dataclass's figures (metastore.statistics.column_pieces) are
the columns column_stats and rollup_columns share (metastore.models.ColumnFigures), in the
tables' order."""

from __future__ import annotations

from metastore import models
from metastore.statistics.column_pieces import FIGURES, ColumnPiece, figures_of, piece_of_partition


def test_the_tables_share_the_figures_in_order() -> None:
    stats = list(models.ColumnStats.__table__.c.keys())
    rollup = list(models.RollupColumn.__table__.c.keys())
    assert stats == ["table_id", "partition_id", "column_name", *FIGURES, "absent", "iceberg_theta"]
    assert rollup == [
        "table_id",
        "level",
        "block",
        "column_name",
        "partitions",
        "with_hll",
        "with_theta",
        "with_sketch",
        *FIGURES,
        "distinct_sum",
        "absent",
    ]


def test_a_piece_is_a_rollup_columns_record() -> None:
    """What a merged piece stores (metastore.statistics.rollups) names rollup_columns' columns."""
    keys = {"table_id", "level", "block", "column_name"}
    stored = set(models.RollupColumn.__table__.c.keys()) - keys
    assert stored == {f for f in ColumnPiece.__dataclass_fields__ if f != "top_k_text"}


def test_a_partition_record_as_a_piece() -> None:
    row = models.ColumnStats(
        null_count=2,
        min_value="a",
        max_value="b",
        total_len=3,
        max_len=2,
        hll=None,
        kll=memoryview(b"k"),
        theta=None,
        top_k=None,
        top_k_items="strings",
        absent=True,
    )
    assert figures_of(row)["kll"] == b"k"
    piece = piece_of_partition(row)
    assert piece.figures() == figures_of(row)
    assert (piece.partitions, piece.with_sketch, piece.distinct_sum, piece.absent) == (
        1,
        0,
        None,
        1,
    )
