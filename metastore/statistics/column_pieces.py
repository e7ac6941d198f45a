"""A column's statistics over some partitions, as stored: one partition's record
(column_stats) or a block of partitions merged ahead of time (rollup_columns,
metastore.statistics.rollups). Pieces merge into pieces exactly as partitions do: counts add,
min/max compare, sketches union; how many partitions had each kind of sketch is counted, so that a
merge of pieces decides as a merge of their partitions would (metastore.statistics.summaries: NDV
from Theta only when every partition has a Theta sketch). Each piece also keeps the sum of
its partitions' own distinct counts: the distinct (partition, value) pairs, which add."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from decimal import Decimal
from operator import attrgetter
from typing import Any

from datasketches import compact_theta_sketch, frequent_strings_sketch, hll_sketch, theta_union

from metastore.column_type import ColumnType
from metastore.statistics.exact_sets import exact_count
from metastore.statistics.from_top_k import read_kll, read_theta, stored_kll
from metastore.statistics.histograms import (
    KLL_K,
    THETA_LG_K,
    TOP_K_MERGE_LG_MAX,
    KllMerge,
    inflated,
    merge_hll,
    stored_hll,
    stored_top_k,
    text_form,
)
from metastore.statistics.kll_packing import packed_kll


@dataclass(frozen=True)
class ColumnFigures:
    """A column's statistics over one partition or more: exact figures and mergeable
    sketches, as column_stats and rollup_columns store them (metastore.models.ColumnFigures,
    their shared columns)."""

    null_count: int
    min_value: str | None
    max_value: str | None
    total_len: int | None
    max_len: int | None
    hll: bytes | None
    kll: bytes | None
    theta: bytes | None
    top_k: bytes | None
    top_k_items: str | None

    def figures(self) -> dict[str, Any]:
        """The figures alone, by name (as the tables' ColumnFigures columns name them)."""
        return dict(zip(FIGURES, _read_figures(self), strict=True))


FIGURES = tuple(f.name for f in fields(ColumnFigures))
SKETCHES = ("hll", "kll", "theta", "top_k")
_read_figures = attrgetter(*FIGURES)


def figures_of(row: Any) -> dict[str, Any]:
    """The figures of a row that has them (column_stats', rollup_columns', a collected
    record), by name, sketches as bytes (heavy hitters inflated: `stored_figures`)."""
    found = dict(zip(FIGURES, _read_figures(row), strict=True))
    found["null_count"] = int(found["null_count"])
    for name in SKETCHES:
        if (value := found[name]) is not None:
            found[name] = bytes(value)
    if found["top_k"] is not None:
        found["top_k"] = inflated(found["top_k"])
    found["kll"] = read_kll(found["kll"], found["top_k"], found["top_k_items"])
    found["theta"] = read_theta(found["theta"], found["top_k"], found["top_k_items"])
    return found


def stored_figures(figures: dict[str, Any]) -> dict[str, Any]:
    """Figures as a row stores them: heavy hitters deflated where that is smaller (the
    other sketches are serialised in their stored forms already)."""
    return {
        **figures,
        "kll": stored_kll(figures.get("kll")),
        "top_k": stored_top_k(figures.get("top_k")),
    }


@dataclass(frozen=True)
class ColumnPiece(ColumnFigures):
    """The figures of a column over a piece of partitions (rollup_columns' record): how
    many partitions, and of them how many had each kind of sketch."""

    partitions: int  # partitions with a record of the column
    with_hll: int
    with_theta: int
    with_sketch: int  # with an HLL or a Theta sketch
    top_k_text: bool = False  # top_k in text form (histograms.text_form), as blocks keep it
    # the sum over the piece's partitions of each one's distinct count: the distinct
    # (partition, value) pairs; None when a partition had no sketch or a block lacks it
    distinct_sum: int | None = None
    # how many of the piece's partitions lack the column (their rows are in null_count)
    absent: int = 0

    def top_k_as_text(self) -> bytes | None:
        """The heavy hitters in text form, which merges natively."""
        if self.top_k is None or self.top_k_text:
            return self.top_k
        return text_form(self.top_k, self.top_k_items)


def piece_of_partition(row: Any) -> ColumnPiece:
    """One partition's column_stats record (or a collected one) as a piece."""
    figures = figures_of(row)
    hll, theta = figures["hll"], figures["theta"]
    return ColumnPiece(
        **figures,
        partitions=1,
        with_hll=int(hll is not None),
        with_theta=int(theta is not None),
        with_sketch=int(bool(hll) or bool(theta)),
        distinct_sum=partition_distinct(theta, hll),
        absent=int(bool(row.absent)),
    )


def partition_distinct(theta: bytes | None, hll: bytes | None) -> int | None:
    """One partition's distinct count of a column: its Theta sketch's estimate, else its
    HLL's (as `metastore.statistics.summaries` prefers them); None without either."""
    if theta:
        estimate: float = compact_theta_sketch.deserialize(theta).get_estimate()
        return round(estimate)
    if hll:
        if (count := exact_count(hll)) is not None:
            return count
        estimate = hll_sketch.deserialize(inflated(hll)).get_estimate()
        return round(estimate)
    return None


def piece_of_block(row: Any) -> ColumnPiece:
    """A rollup_columns record as a piece."""
    return ColumnPiece(
        **figures_of(row),
        partitions=int(row.partitions),
        with_hll=int(row.with_hll),
        with_theta=int(row.with_theta),
        with_sketch=int(row.with_sketch),
        top_k_text=True,
        distinct_sum=None if row.distinct_sum is None else int(row.distinct_sum),
        absent=int(row.absent or 0),
    )


def merge_pieces(
    type_: str, pieces: Sequence[ColumnPiece], theta_lg_k: int = THETA_LG_K, kll_k: int = KLL_K
) -> ColumnPiece:
    """The pieces as one, sketches serialised: what a block of them stores (its Theta
    union of `theta_lg_k`, its KLL sketch of `kll_k`)."""
    merger = PieceMerger(type_, theta_lg_k, kll_k)
    for at, piece in enumerate(pieces):
        merger.add(piece, at)
    return merger.result()


class PieceMerger:
    """Pieces of one column merged as they come (merge_pieces: all at once): counts added,
    min and max compared, sketches unioned natively as each piece is added, so that a block
    whose partitions arrive one by one has little left to do once the last does. Each piece
    is added `at` its place among them (a partition's id): HLL sketches are unioned in that
    order, by `result` (an exact set's values feed HLL's running estimate in turn, so a
    block reads the same whatever order its partitions arrived in). `result` ends the
    merge."""

    def __init__(self, type_: str, theta_lg_k: int = THETA_LG_K, kll_k: int = KLL_K) -> None:
        self._parse = value_parser(type_)
        self._theta_lg_k, self._kll_k = theta_lg_k, kll_k
        self._counts = dict.fromkeys(_ADDED, 0)
        self._least: tuple[Any, str] | None = None  # (value, its text)
        self._most: tuple[Any, str] | None = None
        self._total_len: int | None = None
        self._max_len: int | None = None
        self._distinct_sum: int | None = 0
        self._hll: list[tuple[int, bytes]] = []
        self._kll: KllMerge | None = None
        self._theta: theta_union | None = None
        self._top_k: frequent_strings_sketch | None = None
        self._items: str | None = None
        self._items_known = False

    def add(self, piece: ColumnPiece, at: int) -> None:
        for name in _ADDED:
            self._counts[name] += getattr(piece, name)
        if piece.min_value is not None:
            value = self._parse(piece.min_value)
            if self._least is None or value < self._least[0]:
                self._least = (value, piece.min_value)
        if piece.max_value is not None:
            value = self._parse(piece.max_value)
            if self._most is None or value > self._most[0]:
                self._most = (value, piece.max_value)
        if piece.total_len is not None:
            self._total_len = (self._total_len or 0) + piece.total_len
        if piece.max_len is not None and (self._max_len is None or piece.max_len > self._max_len):
            self._max_len = piece.max_len
        self._distinct_sum = (
            None
            if self._distinct_sum is None or piece.distinct_sum is None
            else self._distinct_sum + piece.distinct_sum
        )
        if piece.hll is not None:
            self._hll.append((at, piece.hll))
        if piece.kll is not None:
            self._kll = self._kll or KllMerge(self._kll_k)
            self._kll.add(piece.kll)
        if piece.theta is not None:
            self._theta = self._theta or theta_union(self._theta_lg_k)
            self._theta.update(compact_theta_sketch.deserialize(piece.theta))
        if piece.top_k is not None and not self._items_known:
            self._items, self._items_known = piece.top_k_items, True
        if (text := piece.top_k_as_text()) is not None:
            self._top_k = self._top_k or frequent_strings_sketch(TOP_K_MERGE_LG_MAX)
            self._top_k.merge(frequent_strings_sketch.deserialize(text))

    def result(self) -> ColumnPiece:
        return ColumnPiece(
            **self._counts,
            min_value=None if self._least is None else self._least[1],
            max_value=None if self._most is None else self._most[1],
            total_len=self._total_len,
            max_len=self._max_len,
            hll=stored_hll(merge_hll(b for _, b in sorted(self._hll))) if self._hll else None,
            kll=None if self._kll is None else packed_kll(self._kll.result().serialize()),
            theta=None
            if self._theta is None
            else self._theta.get_result().serialize(compress=True),
            top_k=None if self._top_k is None else self._top_k.serialize(),
            top_k_items=self._items,
            top_k_text=True,
            distinct_sum=self._distinct_sum,
        )


# the figures a merge adds up
_ADDED = ("partitions", "with_hll", "with_theta", "with_sketch", "null_count", "absent")


def distinct_sum(pieces: Sequence[ColumnPiece]) -> int | None:
    """The pieces' distinct (partition, value) pairs: their sums added (None when one is
    unknown)."""
    sums = [p.distinct_sum for p in pieces]
    return None if any(s is None for s in sums) else sum(s for s in sums if s is not None)


def _extreme(
    texts: list[str | None], parse: Callable[[str], Any], pick: Callable[..., Any]
) -> str | None:
    """The text of the smallest (or largest) value, as stored."""
    present = [t for t in texts if t is not None]
    if not present:
        return None
    return str(pick(present, key=parse))


def value_parser(type_: str) -> Callable[[str], Any]:
    """A stored min/max text as a value of the column's type."""
    if ColumnType.of(type_).integral:
        return int
    if type_ == "boolean":
        return _boolean
    if type_ in ("float", "double"):
        return float
    if type_.startswith("decimal"):
        return Decimal
    if type_ == "date":
        return dt.date.fromisoformat
    if type_.startswith("timestamp"):
        return dt.datetime.fromisoformat
    return str


def _boolean(text: str) -> bool:
    """A boolean's stored text (format_value: true, false) as a value."""
    return text == "true"
