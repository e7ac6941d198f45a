"""A join key's degrees: per value, the rows of a plan node that hold it (docs/estimator.md#
key-degrees). A join's rows are the sum over the key's values of the product of the two
sides' degrees, and the joined rows' degrees are those products: carried up a plan, they let
a second join on the same key meet the keys heavy in both earlier tables (a star through a
shared owner, a chain along one key), where the average rows per key multiply as if the
tables' fan-outs were independent.

A scan's degrees are read off the table's row sample: the rows the scan's filter kept, each
weighted by the rows it stands for. Products of independent samples so weighted estimate
the join without bias (Haas, Naughton, Seshadri and Swami 1996, the cross-product
estimator): a value one sample missed counts zero there, as often as it counts its weight
where drawn. After a join on one key, the other columns of the scan that key was read from
weigh each sampled row by the other side's rows holding its key
(optimizer.estimate.carried_degrees): a post's owner counts once per vote of the post after
votes JOIN posts; the other side's degrees are
first drawn towards their average as far as sampling explains their spread (`shrinkage`: a
sparsely sampled even key is noise, not degrees). Two scans of one table share its sampled
rows and are not independent samples: each half of the rows (split by their content) meets
the other half (a self-join, `joined`).

A product of several sampled figures is unbiased but skewed: a key heavy in two tables and
light in a sampled third meets zero rows there most of the time. Before two sides of
different tables multiply, each sampled side's figures are pooled among their peers, the
values the other side holds about as many rows of (`_pooled_product`), as far as each
figure's sampling variance (carried with the degrees) explains their spread.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from typing import Any, Final

import numpy as np

from metastore.statistics.samples import Sample, from_number
from optimizer.estimate.peer_pooling import pooled
from optimizer.estimate.scan_sample import ScanSample, string_codes, value_codes

# per sampled table, degrees from each half of its sampled rows (KeyDegrees.halves)
Halves = Mapping[str, tuple[np.ndarray, np.ndarray]]

DEGREE_MCV_LIMIT: Final = 100  # the most common values a join key is given from its degrees
HALF_COLUMNS: Final = 6  # numeric columns a sampled row's half is hashed from
FINGERPRINT_STRIDE: Final = 61  # a degrees' values and rows hashed one in this many
# the sampled row pairs that meet from which two sampled scans' join takes the degrees' rows
SAMPLED_PAIRS_LEAST: Final = 1000


@dataclass(frozen=True, eq=False)
class KeyDegrees:
    """Per value of a join key that the samples show (`values`, sorted: doubles, or
    strings), the rows holding it; `support`, the sampled row combinations each figure
    rests on; `exact` when every sample behind it held every row of its scan; `tables`, the
    tables whose samples it comes from; `halves`, per sampled table of `half_tables`, the
    same degrees from each half of its sampled rows (each row weighing twice), for a later
    join with that table again: computed (`halves_of`) only when one asks; `variance`, per
    value, the sampling variance of its figure (None: from its support, `noise`)."""

    values: np.ndarray
    rows: np.ndarray
    support: np.ndarray
    exact: bool
    tables: frozenset[str]
    half_tables: frozenset[str] = frozenset()
    halves_of: Callable[[], Halves] | None = field(default=None, repr=False)
    variance: np.ndarray | None = field(default=None, repr=False)
    # a sampled scan multiplied in is read on a key of its table (`degrees_of`): a value's
    # figure says whether it is there at all, which its peers do not tell (peer_pooling.pooled)
    keyed: bool = False
    # values known to hold no rows (sorted; None: none known): a value whose every row the
    # sample holds (forced in: collectors/forced_keys.py) and of which the filter kept none.
    # Its peers do not fill it in (`_pooled_product`), and a product of it has none
    absent: np.ndarray | None = field(default=None, repr=False)

    @cached_property
    def halves(self) -> Halves:
        return {} if self.halves_of is None else self.halves_of()

    @property
    def total(self) -> float:
        return float(self.rows.sum())

    @cached_property
    def content(self) -> Hashable:
        """What a product of these degrees depends on (`PooledProducts`): the fingerprint,
        whether they were read on a key, and every FINGERPRINT_STRIDE-th variance."""
        stride = slice(None, None, FINGERPRINT_STRIDE)
        variance = None if self.variance is None else self.variance[stride].tobytes()
        return (self.fingerprint, self.keyed, variance, float(self.noise().sum()))

    @cached_property
    def fingerprint(self) -> int:
        """A hash of the degrees' content (equal degrees of two requests, equal hashes; the
        halves follow from what the rows do): their size and total, and every
        FINGERPRINT_STRIDE-th value and row (each request hashes the degrees it weighs with)."""
        stride = slice(None, None, FINGERPRINT_STRIDE)
        content = (self.values[stride].tobytes(), self.rows[stride].tobytes())
        shape = (len(self.values), self.total, float(self.support.sum()))
        absent = None if self.absent is None else self.absent.tobytes()
        return hash((content, shape, self.exact, self.tables, self.half_tables, absent))

    def scaled(self, total: float) -> KeyDegrees:
        """The same shape over `total` rows."""
        own = self.total
        if own <= 0 or total == own:
            return self
        factor = total / own

        def halves() -> Halves:
            return {t: (a * factor, b * factor) for t, (a, b) in self.halves.items()}

        return replace(
            self,
            rows=self.rows * factor,
            halves_of=halves if self.half_tables else None,
            variance=None if self.variance is None else self.variance * factor * factor,
        )

    def noise(self) -> np.ndarray:
        """Per value, the sampling variance of its figure: `variance`, else a sampled row
        weighing w adding about w (w - 1) (a value's rows over its support, as if drawn row
        by row); 0 for exact degrees."""
        if self.exact:
            return np.zeros(len(self.rows))
        if self.variance is not None:
            return self.variance
        weight = np.divide(
            self.rows, self.support, out=np.ones(len(self.rows)), where=self.support > 0
        )
        noise: np.ndarray = self.rows * np.maximum(weight - 1.0, 0.0)
        return noise

    def shrinkage(self, ndv: float) -> tuple[float, float]:
        """How far each value's figure is to be trusted over the average, (lambda, m): the
        share of the degrees' variance across the key's `ndv` values not explained by
        sampling (a sampled row weighing w adds about m (w - 1) to a value's variance, m the
        average rows per value), and that average (James and Stein 1961; Efron and Morris
        1973). 1 for exact degrees, near 0 for a key as even as its sample is sparse."""
        values = max(ndv, float(len(self.values)), 1.0)
        mean = self.total / values
        if self.exact or mean <= 0:
            return 1.0, mean
        spread = float(np.square(self.rows).sum()) / values - mean * mean
        weight = self.total / max(float(self.support.sum()), 1.0)
        noise = mean * max(weight - 1.0, 0.0)
        if spread <= 0:
            return 0.0, mean
        return max(0.0, spread - noise) / spread, mean

    def most_common(self, rows: float, type_: str) -> tuple[tuple[Any, float], ...]:
        """The values with the most rows, as fractions of `rows`: the MCVs of a column of
        type `type_`."""
        if rows <= 0 or not len(self.rows):
            return ()
        count = min(DEGREE_MCV_LIMIT, len(self.rows))
        top = np.argpartition(-self.rows, count - 1)[:count]
        top = top[np.argsort(-self.rows[top], kind="stable")]
        # as Python objects at once: numpy scalars one at a time cost more than the rest
        values, counts = self.values[top].tolist(), self.rows[top].tolist()
        return tuple(
            (_value(value, type_), min(1.0, count / rows))
            for value, count in zip(values, counts, strict=True)
            if count > 0
        )


@dataclass(frozen=True)
class NotKnown:
    """A key column whose degrees nothing shows (after a GROUP BY, a UNION, or a join the
    degrees could not estimate): not its scan's shape either."""


NOT_KNOWN: Final = NotKnown()


@dataclass(frozen=True, eq=False)
class JoinedDegrees:
    """An inner join's rows from its key's degrees (`left`'s and `right`'s), and the joined
    rows' degrees, multiplied when first read (`joined`); `weak` when no sampled row met one
    of the other side (and the samples are not whole): its rows then are not to be trusted
    over the sketches'."""

    left: KeyDegrees
    right: KeyDegrees

    @property
    def exact(self) -> bool:
        """Whether both sides' samples hold every row (the product is exact)."""
        return self.left.exact and self.right.exact

    @cached_property
    def degrees(self) -> KeyDegrees:
        return _product(self.left, self.right)

    @property
    def rows(self) -> float:
        return self.degrees.total

    @cached_property
    def _met(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The values both sides show, and their positions in each (`_intersected`)."""
        return _intersected(self.left.values, self.right.values)

    @cached_property
    def sampled_pairs(self) -> float:
        """The sampled row pairs of the two sides that meet (0 where a side is exact)."""
        if self.left.exact or self.right.exact:
            return 0.0
        _, at_left, at_right = self._met
        return float((self.left.support[at_left] * self.right.support[at_right]).sum())

    @cached_property
    def weak(self) -> bool:
        return not self.exact and not len(self._met[0])


def scan_degrees(scan: ScanSample, name: str) -> KeyDegrees | None:
    """The degrees of column `name` among the sampled rows the scan's filter kept, each
    weighted by the rows it stands for; None when the sample lacks the column or is not
    sampled as numbers or strings. Kept with the scan (each join order asks again) and with
    the sample under the kept rows' fingerprint (each request with the same filter); what
    the sample keeps holds no function, so no request's objects outlive it there."""
    key = ("key degrees", name)
    if key not in scan.memo:
        loaded = scan.rows()
        table = scan.table or scan.alias
        kept: KeyDegrees | None = None
        if loaded is not None:
            kept = loaded[0].derived(
                ("key degrees", name, table, kept_rows_key(scan)),
                partial(_counted, loaded[0], loaded[1], name, table),
            )
        scan.memo[key] = kept
    found: KeyDegrees | None = scan.memo[key]
    if found is not None and found.half_tables:  # attached here: the memo holds no cycle
        table = scan.table or scan.alias
        return replace(found, halves_of=partial(_scan_halves, scan, name, table))
    return found


def kept_rows_key(scan: ScanSample) -> Hashable:
    """Which of its sample's rows the scan kept, as a key (None: all of them)."""
    if scan.passed is None:
        return None
    if "kept rows key" not in scan.memo:
        passed = np.asarray(scan.passed, dtype=bool)
        scan.memo["kept rows key"] = (
            len(passed),
            int(passed.sum()),
            hash(np.packbits(passed).tobytes()),
        )
    return scan.memo["kept rows key"]  # type: ignore[no-any-return]


def _counted(sample: Sample, passed: np.ndarray, name: str, table: str) -> KeyDegrees | None:
    counting = _scan_counting(sample, passed, name)
    if counting is None:
        return None
    values, _, kept, weights, support, counted = counting
    exact = bool(np.all(weights == 1.0))
    return KeyDegrees(
        values,
        counted(weights, kept),
        support,
        exact,
        frozenset({table}),
        # a whole sample needs no halves: its rows are the table's, each once
        frozenset() if exact else frozenset({table}),
        # a row drawn with probability 1/w: w (w - 1) (Horvitz and Thompson 1952)
        variance=counted(weights * (weights - 1.0), kept),
        absent=_absent(sample, passed, name),
    )


def _scan_halves(scan: ScanSample, name: str, table: str) -> Halves:
    """The scan's degrees from each half of its sampled rows (KeyDegrees.halves)."""
    loaded = scan.rows()
    counting = None if loaded is None else _scan_counting(loaded[0], loaded[1], name)
    if loaded is None or counting is None:
        return {}
    _, chosen, kept, weights, _, counted = counting
    second = row_halves(loaded[0])[chosen]
    first_half = counted(2.0 * weights[~second], kept[~second])
    return {table: (first_half, counted(2.0 * weights[second], kept[second]))}


def _scan_counting(
    sample: Sample, passed: np.ndarray, name: str
) -> (
    tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, Callable[..., np.ndarray]]
    | None
):
    """The values the scan's kept sampled rows show (sorted), which sampled rows are kept
    (kept by the filter, not NULL), each kept row's index among the column's codes and its
    weight, each value's sampled rows, and a bincount of kept rows' weights by value in that
    order."""
    coded = sample_codes(sample, name)
    if coded is None:
        return None
    values, codes = coded
    chosen = passed & (codes >= 0)
    kept, weights = codes[chosen], sample.weights[chosen]
    support = np.bincount(kept, minlength=len(values)).astype(np.float64)
    present = support > 0
    # a numeric column's values are sorted already; a string column's dictionary is not
    order = (
        np.arange(int(present.sum()))
        if values.dtype.kind == "f"
        else np.argsort(values[present], kind="stable")
    )

    def counted(rows_weights: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return np.bincount(rows, weights=rows_weights, minlength=len(values))[present][order]

    return values[present][order], chosen, kept, weights, support[present][order], counted


def _absent(sample: Sample, passed: np.ndarray, name: str) -> np.ndarray | None:
    """The column's forced keys (Sample.complete: values whose every row the sample holds)
    of which the scan's filter (`passed`) kept no sampled row, sorted; None where there
    are none."""
    complete = sample.complete.get(name)
    coded = None if complete is None else sample_codes(sample, name)
    if complete is None or coded is None or coded[0].dtype.kind != "f":
        return None
    values, codes = coded
    kept = values[np.unique(codes[passed & (codes >= 0)])]
    found = np.setdiff1d(complete, kept, assume_unique=True)
    return found if len(found) else None


def row_halves(sample: Sample) -> np.ndarray:
    """Per sampled row, whether it is in the second half of the sample: split by a hash of
    its numeric values, so a row pooled into two samples of one table (two scans' partition
    selections) falls in the same half of both (kept with the sample)."""
    return sample.derived(("row halves",), lambda: _halves(sample))


def _halves(sample: Sample) -> np.ndarray:
    names = [n for n in sorted(sample.columns) if sample.numeric(n)][:HALF_COLUMNS]
    if not names:
        return np.asarray(np.arange(sample.size) % 2 == 1, dtype=bool)
    mixed = np.zeros(sample.size, dtype=np.uint64)
    for name in names:
        values = np.nan_to_num(np.asarray(sample.columns[name], dtype=np.float64), nan=-1.0)
        mixed = _mix(mixed ^ values.view(np.uint64))
    return np.asarray(_mix(mixed) >> np.uint64(63), dtype=bool)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser (Steele, Lea and Flood 2014), wrapping in uint64."""
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return np.asarray(x ^ (x >> np.uint64(31)), dtype=np.uint64)


def joined(left: KeyDegrees, right: KeyDegrees) -> JoinedDegrees | None:
    """The join of two sides on one key: per value both show, the product of its rows on
    each side (`_product`, when first read).

    Sides that read one table share its sampled rows, and a row's weight squared overcounts
    its pair with itself: whole samples multiply as they are; sampled ones join each half of
    the rows on one side with the other half on the other (disjoint rows, so independent),
    averaged, plus the rows paired with themselves (at most the fewer of a value's rows on
    the two sides). None when the values are of different kinds, or the sides share tables
    they cannot split so (more than one, or a side without that table's halves)."""
    if left.values.dtype.kind != right.values.dtype.kind:
        return None
    shared = left.tables & right.tables
    if shared and not (left.exact and right.exact):
        if len(shared) != 1:
            return None
        (table,) = shared
        if table not in left.half_tables or table not in right.half_tables:
            return None
    return JoinedDegrees(left, right)


def _product(left: KeyDegrees, right: KeyDegrees) -> KeyDegrees:
    """The joined rows' degrees of two sides `joined` accepts: two sampled sides of
    different tables pooled first (`_pooled_product`)."""
    poolable = any(not side.exact and not side.keyed for side in (left, right))
    if poolable and not left.tables & right.tables:
        return _POOLED_PRODUCTS.product(left, right)
    values, at_left, at_right = _intersected(left.values, right.values)
    left_rows, right_rows = left.rows[at_left], right.rows[at_right]
    shared = left.tables & right.tables
    exact = left.exact and right.exact
    if shared and not exact:
        (table,) = shared
        mine, theirs = left.halves[table], right.halves[table]
        first = mine[0][at_left] * theirs[1][at_right]
        second = mine[1][at_left] * theirs[0][at_right]
        rows = (first + second) / 2.0 + np.minimum(left_rows, right_rows)
    else:
        rows = left_rows * right_rows

    def halves() -> Halves:
        # the halves of the other tables each side read, carried for a later join with one
        # again (as the product's share of each value's rows)
        product = left_rows * right_rows
        share = np.divide(rows, product, out=np.zeros_like(rows), where=product > 0)
        carried = {}
        for own, at, other_rows in ((left, at_left, right_rows), (right, at_right, left_rows)):
            for table, (a, b) in own.halves.items():
                if table not in shared:
                    carried[table] = (a[at] * other_rows * share, b[at] * other_rows * share)
        return carried

    support = left.support[at_left] * right.support[at_right]
    half_tables = (left.half_tables | right.half_tables) - shared
    return KeyDegrees(
        values,
        rows,
        support,
        exact,
        left.tables | right.tables,
        half_tables,
        halves if half_tables else None,
        _product_variance(left_rows, left.noise()[at_left], right_rows, right.noise()[at_right]),
        left.keyed or right.keyed,
        _absent_either(left, right),
    )


def _absent_either(left: KeyDegrees, right: KeyDegrees) -> np.ndarray | None:
    """The values either side knows to hold no rows (KeyDegrees.absent): a product of
    them has none."""
    if left.absent is None or right.absent is None:
        return left.absent if right.absent is None else right.absent
    return np.union1d(left.absent, right.absent)


class PooledProducts:
    """Pooled products (`_pooled_product`) kept across requests by their sides' content, as
    arrays only, the least recently used dropped beyond `limit` bytes: a query asked again
    multiplies nothing. The halves of a kept product are computed again from the request's
    own sides when a join asks for them (a table read again; rare)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._kept: OrderedDict[Hashable, KeyDegrees] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def product(self, left: KeyDegrees, right: KeyDegrees) -> KeyDegrees:
        key = (left.content, right.content)
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
        if found is None:
            made = _pooled_product(left, right)
            found = replace(made, halves_of=None)
            size = _nbytes(found)
            if size <= self.limit:
                with self._lock:
                    if key not in self._kept:
                        self._kept[key] = found
                        self._bytes += size
                    while self._bytes > self.limit:
                        _, dropped = self._kept.popitem(last=False)
                        self._bytes -= _nbytes(dropped)
        if not found.half_tables:
            return found
        return replace(found, halves_of=lambda: _pooled_product(left, right).halves)


def _nbytes(degrees: KeyDegrees) -> int:
    """The bytes a kept product's arrays take."""
    arrays = (degrees.values, degrees.rows, degrees.support, degrees.variance)
    return sum(a.nbytes for a in arrays if a is not None)


POOLED_PRODUCT_BYTES: Final = 24 * 1024 * 1024  # pooled products kept across requests
_POOLED_PRODUCTS: Final = PooledProducts(POOLED_PRODUCT_BYTES)


def _product_variance(
    left: np.ndarray, left_noise: np.ndarray, right: np.ndarray, right_noise: np.ndarray
) -> np.ndarray:
    """The variance of a product of two independent figures (Goodman 1960)."""
    variance: np.ndarray = left * left * right_noise + right * right * left_noise
    variance += left_noise * right_noise
    return variance


def _pooled_product(left: KeyDegrees, right: KeyDegrees) -> KeyDegrees:
    """The joined rows' degrees of two sides of different tables, one at least sampled and
    not read on a key of its table: each such side's figures first pooled among the values
    the other side holds about as many rows of (peer_pooling.pooled), so a value heavy on
    one side and light on the other meets the light side's rows as its peers show them, not
    the zero or the one sampled row's weight its own sample happened to show. A value's
    product is then a product of steady figures: a star of sampled tables multiplies no
    sampling noise. The values are those an exact or keyed side shows (what it does not
    show has no rows), else those either side shows."""
    anchor = next((side for side in (left, right) if side.exact or side.keyed), None)
    values = np.union1d(left.values, right.values) if anchor is None else anchor.values
    own_rows, own_support, own_noise, own_at = [], [], [], []
    for side in (left, right):
        _, at_side, at = shared_values(side.values, values)
        rows, support, noise = (np.zeros(len(values)) for _ in range(3))
        rows[at], support[at], noise[at] = (
            side.rows[at_side],
            side.support[at_side],
            side.noise()[at_side],
        )
        own_rows.append(rows)
        own_support.append(support)
        own_noise.append(noise)
        own_at.append((at, at_side))
    # an exact side has no noise to pool, a keyed one values its peers cannot tell
    pooled_sides = [
        pooled(rows, support, noise, None if side.exact or side.keyed else other)
        for side, rows, support, noise, other in (
            (left, own_rows[0], own_support[0], own_noise[0], own_rows[1]),
            (right, own_rows[1], own_support[1], own_noise[1], own_rows[0]),
        )
    ]
    left_rows, right_rows = pooled_sides[0][0], pooled_sides[1][0]
    rows = left_rows * right_rows
    absent = _absent_either(left, right)
    if absent is not None:  # known to hold no rows on a side: its peers do not fill it in
        rows[np.isin(values, absent)] = 0.0
    kept = np.flatnonzero(rows > 0)

    def halves() -> Halves:
        # the halves of the tables each side read, pooled as its figures were, times the
        # other side's pooled figures (for a later join with one of them again)
        carried = {}
        for side, (at, at_side), (_, _, _, trust, mean), other_rows in (
            (left, own_at[0], pooled_sides[0], right_rows),
            (right, own_at[1], pooled_sides[1], left_rows),
        ):
            for table, (a, b) in side.halves.items():
                spread_a, spread_b = np.zeros(len(values)), np.zeros(len(values))
                spread_a[at], spread_b[at] = a[at_side], b[at_side]
                carried[table] = (
                    ((mean + trust * (spread_a - mean)) * other_rows)[kept],
                    ((mean + trust * (spread_b - mean)) * other_rows)[kept],
                )
        return carried

    half_tables = left.half_tables | right.half_tables
    return KeyDegrees(
        values[kept],
        rows[kept],
        (pooled_sides[0][1] * pooled_sides[1][1])[kept],
        left.exact and right.exact,  # one side at least is sampled (`_product`)
        left.tables | right.tables,
        half_tables,
        halves if half_tables else None,
        _product_variance(left_rows, pooled_sides[0][2], right_rows, pooled_sides[1][2])[kept],
        left.keyed or right.keyed,
        absent,
    )


def sample_codes(sample: Sample, name: str) -> tuple[np.ndarray, np.ndarray] | None:
    """A sampled column's distinct values (doubles, or strings as numpy text) and per
    sampled row the index of its value among them (-1: NULL); None when the sample has no
    such column or does not sample it as numbers or strings."""
    numeric = sample.numeric(name)
    if numeric is None:
        return None
    if numeric:
        distinct, codes = sample.derived(
            ("value codes", name), lambda: value_codes(sample.columns[name])
        )
        return np.asarray(distinct, dtype=np.float64), codes
    dictionary, codes = string_codes(sample, name)
    text = sample.derived(
        ("dictionary text", name), lambda: np.asarray(dictionary.to_pylist(), dtype=str)
    )
    return text, codes


def shared_values(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The values two arrays of distinct values share (`right` sorted), and their positions
    in each."""
    at = np.searchsorted(right, left)
    inside = at < len(right)
    match = np.zeros(len(left), dtype=bool)
    match[inside] = right[at[inside]] == left[inside]
    at_left = np.flatnonzero(match)
    return left[at_left], at_left, at[at_left]


def _intersected(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`shared_values` of two sorted arrays of distinct values, the shorter one looked up in the
    longer (the same values, in the same order, either way)."""
    if len(left) <= len(right):
        return shared_values(left, right)
    _, at_right, at_left = shared_values(right, left)
    return left[at_left], at_left, at_right


def _value(value: Any, type_: str) -> Any:
    """A value of the degrees as a column of type `type_` holds it (a sampled number back as
    its date, integer or decimal)."""
    if isinstance(value, str):  # numpy's text too
        return str(value)
    return from_number(float(value), type_)
