"""Charts of a column's histograms, as `ColumnSummary.as_json()` gives them.

- bar_chart: a terminal bar chart of one histogram, one text line per bucket (merged down to
  at most max_rows buckets), drawn with Unicode block characters; pure, no I/O.
- plot_histograms: a PNG of the equi-width and equi-depth histograms with matplotlib (imported
  lazily); equi-depth bars are drawn as densities so unequal widths do not mislead.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from metastore.errors import InvalidValue

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.ticker import Formatter, Locator

FULL_BLOCK = "\u2588"
# EIGHTHS[k] is a block k/8 of a cell wide (k = 1..7): U+258F (1/8) down to U+2589 (7/8).
EIGHTHS = ["", *(chr(0x2590 - k) for k in range(1, 8))]


def bar_chart(histogram: dict[str, list[Any]], width: int = 40, max_rows: int = 16) -> list[str]:
    """One line per bucket: "[low, high)" (the last "[low, high]"), its row count and a bar
    scaled so the largest count fills `width` cells. More than `max_rows` buckets are merged
    evenly into `max_rows` groups. An empty histogram gives no lines."""
    if width < 1 or max_rows < 1:
        raise ValueError("a bar chart needs a width and max_rows of at least 1")
    bounds, counts = _checked(histogram)
    if not counts:
        return []
    bounds, counts = _merge(bounds, counts, max_rows)
    last = len(counts) - 1
    labels = [
        f"[{_bound(bounds[i])}, {_bound(bounds[i + 1])}{']' if i == last else ')'}"
        for i in range(len(counts))
    ]
    shown = [_count(c) for c in counts]
    label_width = max(len(label) for label in labels)
    count_width = max(len(s) for s in shown)
    largest = max(counts)
    return [
        f"{label:<{label_width}}  {text:>{count_width}}  {_bar(count, largest, width)}".rstrip()
        for label, text, count in zip(labels, shown, counts, strict=True)
    ]


def plot_histograms(
    path: str,
    title: str,
    column: str,
    equi_depth: dict[str, list[Any]] | None,
    equi_width: dict[str, list[Any]] | None,
) -> None:
    """Write a PNG at `path` with one subplot per histogram given: equi-width as bars of
    their counts, equi-depth as bars of their density (rows per unit of the column; per day
    for dates and timestamps, whose ISO strings become matplotlib dates)."""
    if equi_depth is None and equi_width is None:
        raise InvalidValue(f"column {column} has no histogram to plot (it has no KLL sketch)")
    panels = [
        (name, _checked(h))
        for name, h in (("equi-width", equi_width), ("equi-depth", equi_depth))
        if h is not None
    ]
    panels = [(name, data) for name, data in panels if data[1]]
    if not panels:
        raise InvalidValue(f"column {column} has no values to plot (its histograms are empty)")

    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(9, 3.6 * len(panels)), layout="constrained")
    figure.suptitle(title)
    for axes, (name, (bounds, counts)) in zip(
        figure.subplots(len(panels), 1, squeeze=False)[:, 0], panels, strict=True
    ):
        _draw(axes, name, column, bounds, counts)
    try:
        figure.savefig(path, format="png", dpi=100)
    except OSError as exc:
        raise InvalidValue(f"cannot write the plot to {path}: {exc.strerror or exc}") from exc


def _draw(axes: Axes, name: str, column: str, bounds: list[Any], counts: list[float]) -> None:
    import matplotlib.dates as mdates

    edges, dates = _axis_values(bounds)
    widths = [high - low for low, high in zip(edges, edges[1:], strict=False)]
    span = edges[-1] - edges[0]
    # A zero-width bucket (a column of one value) gets a nominal width so it can be seen.
    nominal = span / 100 if span > 0 else 1.0
    widths = [w if w > 0 else nominal for w in widths]
    lefts = edges[:-1]
    if name == "equi-depth":
        heights = [c / w for c, w in zip(counts, widths, strict=True)]
        axes.set_ylabel("density (rows per unit, a day)" if dates else "density (rows per unit)")
    else:
        heights = list(counts)
        axes.set_ylabel("rows")
    axes.bar(lefts, heights, width=widths, align="edge", edgecolor="white", linewidth=0.5)
    axes.set_title(f"{name} ({len(counts)} buckets, {_count(math.fsum(counts))} rows)")
    axes.set_xlabel(column)
    if dates:
        # matplotlib.dates has no annotations: name its callables with the types they have.
        make_locator: Callable[[], Locator] = mdates.AutoDateLocator
        make_formatter: Callable[[Locator], Formatter] = mdates.ConciseDateFormatter
        locator = make_locator()
        axes.xaxis.set_major_locator(locator)
        axes.xaxis.set_major_formatter(make_formatter(locator))


def _axis_values(bounds: Sequence[Any]) -> tuple[list[float], bool]:
    """Bounds as x coordinates, and whether they are dates (then in matplotlib's days)."""
    if all(isinstance(b, str) for b in bounds):
        import matplotlib.dates as mdates

        date2num: Callable[[dt.datetime], float] = mdates.date2num
        return [float(date2num(_parse_instant(b))) for b in bounds], True
    if all(isinstance(b, int | float) and not isinstance(b, bool) for b in bounds):
        return [float(b) for b in bounds], False
    raise InvalidValue("histogram bounds must be all numbers or all ISO dates/timestamps")


def _parse_instant(text: str) -> dt.datetime:
    try:
        day = dt.date.fromisoformat(text)
        return dt.datetime(day.year, day.month, day.day)
    except ValueError:
        pass
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        raise InvalidValue(f"histogram bound {text!r} is not an ISO date or timestamp") from None


def _checked(histogram: dict[str, list[Any]]) -> tuple[list[Any], list[float]]:
    bounds = list(histogram.get("bounds") or [])
    counts = [float(c) for c in histogram.get("counts") or []]
    if counts and len(bounds) != len(counts) + 1:
        raise ValueError(
            f"a histogram of {len(counts)} buckets needs {len(counts) + 1} bounds, "
            f"not {len(bounds)}"
        )
    return bounds, counts


def _merge(bounds: list[Any], counts: list[float], max_rows: int) -> tuple[list[Any], list[float]]:
    """Adjacent buckets merged into `max_rows` groups of (nearly) equal numbers of buckets."""
    n = len(counts)
    if n <= max_rows:
        return bounds, counts
    starts = [g * n // max_rows for g in range(max_rows + 1)]
    merged = [math.fsum(counts[a:b]) for a, b in zip(starts, starts[1:], strict=False)]
    return [bounds[s] for s in starts], merged


def _bound(value: Any) -> str:
    """A bucket bound as text: dates as they are, integers in full, other numbers short."""
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    return _number(value)


def _number(value: float) -> str:
    """The shortest of 6 to 12 significant digits that reads back as the value, else 6."""
    # a decimal's bound 123456.78 in full (not 123457); a double's 124.5575000001 as 124.558
    for digits in range(6, 13):
        text = f"{value:.{digits}g}"
        if float(text) == value:
            return text
    return f"{value:.6g}"


def _count(count: float) -> str:
    nearest = round(count)
    if abs(count - nearest) <= 1e-9 * max(1.0, abs(count)):
        return f"{nearest:,}"
    return f"{count:,.1f}"


def _bar(count: float, largest: float, width: int) -> str:
    if largest <= 0 or count <= 0:
        return ""
    eighths = round(count / largest * width * 8)
    full, part = divmod(eighths, 8)
    return FULL_BLOCK * full + EIGHTHS[part]
