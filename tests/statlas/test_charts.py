from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from metastore.errors import InvalidValue
from statlas.charts import bar_chart, plot_histograms

FULL = "\u2588"
EIGHTHS = "\u258f\u258e\u258d\u258c\u258b\u258a\u2589"  # 1/8 .. 7/8


def bar_cells(line: str) -> float:
    """The length of a line's bar in cells (full blocks plus the fraction of the last one)."""
    cells = float(line.count(FULL))
    for k, char in enumerate(EIGHTHS, start=1):
        cells += line.count(char) * k / 8
    return cells


def count_of(line: str) -> str:
    """The count column of a line whose label has no spaces but the one after the comma."""
    return line.split()[2]


def test_bar_chart_numeric() -> None:
    lines = bar_chart({"bounds": [0, 10, 20, 30.5], "counts": [100.0, 400.0, 255.5]}, width=40)
    assert len(lines) == 3
    assert lines[0].startswith("[0, 10)")
    assert lines[1].startswith("[10, 20)")
    assert lines[2].startswith("[20, 30.5]")  # the last bucket is closed
    assert re.search(r"\s100\s", lines[0])
    assert re.search(r"\s400\s", lines[1])
    assert re.search(r"\s255\.5\s", lines[2])
    assert lines[1].endswith(FULL * 40)  # the largest count fills the width
    assert bar_cells(lines[1]) == 40
    assert bar_cells(lines[0]) == 10
    assert bar_cells(lines[2]) == pytest.approx(40 * 255.5 / 400, abs=1 / 16)
    assert lines[2].endswith(FULL * 25 + "\u258c")  # 25.55 cells -> 25 and a half
    # Counts are right-aligned in one column, bars start in one column.
    ends = {line.index(count_of(line)) + len(count_of(line)) for line in lines}
    assert len(ends) == 1
    starts = {min(i for i, ch in enumerate(line) if ch == FULL) for line in lines}
    assert len(starts) == 1


def test_bar_chart_thousands_and_fractions() -> None:
    lines = bar_chart({"bounds": [1e-7, 2.5, 1234567.0], "counts": [1234567.0, 0.25]}, width=8)
    assert lines[0].startswith("[1e-07, 2.5)")
    assert lines[1].startswith("[2.5, 1234567]")  # in full: it reads back as the bound
    assert "1,234,567" in lines[0]
    assert lines[1].rstrip().endswith("0.2")  # one decimal, bar too short to draw
    assert bar_cells(lines[1]) == 0
    assert lines[0].endswith(FULL * 8)


def test_bar_chart_integer_and_decimal_bounds_in_full() -> None:
    # a bigint's bounds as integers (issue 21.5), however large; a decimal's to its scale
    ids = bar_chart({"bounds": [0, 2277, 12345678901, 12345678902], "counts": [1.0, 2.0, 3.0]})
    assert [line.split(")")[0].split("]")[0] for line in ids] == [
        "[0, 2277",
        "[2277, 12345678901",
        "[12345678901, 12345678902",
    ]
    prices = bar_chart({"bounds": [0.01, 124.56, 123456.78], "counts": [1.0, 1.0]})
    assert prices[0].startswith("[0.01, 124.56)")
    assert prices[1].startswith("[124.56, 123456.78]")
    # a double's bound that no short text reads back as: six significant digits, as before
    assert bar_chart({"bounds": [0.0, 2 / 3], "counts": [1.0]})[0].startswith("[0, 0.666667]")


def test_bar_chart_date_bounds() -> None:
    histogram: dict[str, list[Any]] = {
        "bounds": ["2024-01-01", "2024-02-01", "2024-03-01"],
        "counts": [3000.0, 1500.0],
    }
    lines = bar_chart(histogram, width=20)
    assert lines[0].startswith("[2024-01-01, 2024-02-01)")
    assert lines[1].startswith("[2024-02-01, 2024-03-01]")
    assert "3,000" in lines[0]
    assert "1,500" in lines[1]
    assert bar_cells(lines[0]) == 20
    assert bar_cells(lines[1]) == 10


def test_bar_chart_merges_buckets() -> None:
    bounds = [float(i) for i in range(65)]
    counts = [float(i % 7 + 1) for i in range(64)]
    lines = bar_chart({"bounds": bounds, "counts": counts}, width=30, max_rows=16)
    assert len(lines) == 16
    assert lines[0].startswith("[0, 4)")
    assert lines[-1].startswith("[60, 64]")
    shown = [int(count_of(line).replace(",", "")) for line in lines]
    assert sum(shown) == sum(counts)
    assert shown[0] == sum(counts[0:4])
    assert max(bar_cells(line) for line in lines) == 30


def test_bar_chart_merges_unevenly_divisible() -> None:
    histogram: dict[str, list[Any]] = {"bounds": list(range(11)), "counts": [1.0] * 10}
    lines = bar_chart(histogram, max_rows=3)
    assert len(lines) == 3
    assert lines[0].startswith("[0, ")
    assert lines[-1].startswith("[")
    assert lines[-1].split("]")[0].endswith(", 10")
    assert sum(int(count_of(line)) for line in lines) == 10


def test_bar_chart_empty() -> None:
    assert bar_chart({"bounds": [], "counts": []}) == []
    assert bar_chart({}) == []


def test_bar_chart_rejects_mismatched_bounds() -> None:
    with pytest.raises(ValueError, match="a histogram of 2 buckets needs 3 bounds, not 2"):
        bar_chart({"bounds": [0, 1], "counts": [1.0, 2.0]})


def test_import_does_not_load_matplotlib() -> None:
    import subprocess

    code = "import sys, statlas.charts; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def is_png(path: Path) -> bool:
    return path.read_bytes().startswith(b"\x89PNG")


def test_plot_numeric(tmp_path: Path) -> None:
    path = tmp_path / "price.png"
    depth: dict[str, list[Any]] = {"bounds": [0.0, 1.0, 5.0, 50.0], "counts": [100.0, 100.0, 100.0]}
    width: dict[str, list[Any]] = {"bounds": [0.0, 25.0, 50.0], "counts": [280.0, 20.0]}
    plot_histograms(str(path), "orders.price", "price", depth, width)
    assert is_png(path)
    only_width = tmp_path / "width.png"
    plot_histograms(str(only_width), "orders.price", "price", None, width)
    assert is_png(only_width)


def test_plot_dates_and_timestamps(tmp_path: Path) -> None:
    dates: dict[str, list[Any]] = {
        "bounds": ["2024-01-01", "2024-01-10", "2024-03-01"],
        "counts": [50.0, 50.0],
    }
    path = tmp_path / "day.png"
    plot_histograms(str(path), "orders.day", "day", dates, None)
    assert is_png(path)
    stamps: dict[str, list[Any]] = {
        "bounds": ["2024-01-01 00:00:00", "2024-01-01 06:30:00.250000", "2024-01-02 00:00:00"],
        "counts": [10.0, 30.0],
    }
    path = tmp_path / "ts.png"
    plot_histograms(str(path), "orders.ts", "ts", None, stamps)
    assert is_png(path)


def test_plot_single_value(tmp_path: Path) -> None:
    single: dict[str, list[Any]] = {"bounds": [7.0, 7.0], "counts": [42.0]}
    path = tmp_path / "one.png"
    plot_histograms(str(path), "t.c", "c", single, single)
    assert is_png(path)


def test_plot_without_histograms(tmp_path: Path) -> None:
    with pytest.raises(InvalidValue, match="column name has no histogram to plot"):
        plot_histograms(str(tmp_path / "x.png"), "t.name", "name", None, None)
    assert not (tmp_path / "x.png").exists()


def test_plot_unwritable_path(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "dir" / "x.png"
    width: dict[str, list[Any]] = {"bounds": [0.0, 1.0], "counts": [1.0]}
    with pytest.raises(InvalidValue) as info:
        plot_histograms(str(path), "t.c", "c", None, width)
    message = str(info.value)
    assert str(path) in message
    assert "\n" not in message


def test_plot_bad_bound(tmp_path: Path) -> None:
    with pytest.raises(InvalidValue, match="not an ISO date"):
        plot_histograms(
            str(tmp_path / "x.png"), "t", "c", {"bounds": ["a", "b"], "counts": [1.0]}, None
        )
