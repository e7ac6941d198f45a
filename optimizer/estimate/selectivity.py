"""The estimation formulas, as pure functions over numbers.

`seed_*`: the Hive CBO proposal's formulas without histograms, exactly as written there
(docs/design.md#filter-selectivity, #join-cardinality, #distinct-values, #group-by).
`eqjoin_mcv`: PostgreSQL's eqjoinsel_inner (src/backend/utils/adt/selfuncs.c).
`sketch_join_rows`: join size from Theta-sketch key overlap plus heavy hitters.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

NEARLY_UNIQUE = 0.9  # distinct values per row from which a key counts as unique
SEED_INEQUALITY = 1.0 / 3.0  # <, <=, >, >= (docs/design.md#filter-selectivity)


def seed_equality(ndv: float) -> float:
    """Equality with a literal = 1/V(R, A)."""
    return 1.0 / max(ndv, 1.0)


def seed_column_equality(ndv_a: float, ndv_b: float) -> float:
    """Equality of two columns = 1/max(V(R, A), V(R, B))."""
    return 1.0 / max(ndv_a, ndv_b, 1.0)


def seed_not_equal(ndv: float) -> float:
    """Not equal = (V(R, A) - 1)/V(R, A)."""
    ndv = max(ndv, 1.0)
    return (ndv - 1.0) / ndv


def seed_or_rows(n: float, m1: float, m2: float) -> float:
    """OR = n * (1 - (1 - m1/n)(1 - m2/n)); m1, m2 the rows of each side."""
    if n <= 0:
        return 0.0
    return n * (1.0 - (1.0 - m1 / n) * (1.0 - m2 / n))


def seed_and(selectivities: Iterable[float]) -> float:
    """AND = the product of the selectivities of the conjuncts."""
    return math.prod(selectivities)


def seed_join_selectivity(key_ndvs: Sequence[tuple[float, float]]) -> float:
    """Join selectivity: 1/max(V(R1, a), V(R2, a)) per key, multiplied over the keys."""
    return math.prod(1.0 / max(v1, v2, 1.0) for v1, v2 in key_ndvs)


def seed_inner_join_rows(rows: Sequence[float], selectivity: float) -> float:
    """Inner join = product of the children's cardinalities * join selectivity."""
    return math.prod(rows) * selectivity


def seed_outer_join_rows(inner_rows: float, preserved_rows: float) -> float:
    """One-sided outer join = max(inner join rows, cardinality of the outer side)."""
    return max(inner_rows, preserved_rows)


def seed_full_outer_join_rows(inner_rows: float, left_rows: float, right_rows: float) -> float:
    """Full outer join = max(inner join rows, left + right cardinalities)."""
    return max(inner_rows, left_rows + right_rows)


def seed_join_distinct(ndv_left: float, ndv_right: float) -> float:
    """V(J, a) = max(V(R1, a), V(R2, a)) for an attribute of both sides (inner and full
    outer joins) and for union all; V(R1, a) when it comes from one side only."""
    return max(ndv_left, ndv_right)


def seed_group_by_rows(key_ndvs: Sequence[float]) -> float:
    """V(G, a, b, c) = max(V(R, a), V(R, b), V(R, c)): the rows of a group by."""
    return max(key_ndvs, default=1.0)


def group_by_rows(key_ndvs: Sequence[float], input_rows: float) -> float:
    """Groups: the product of the keys' NDVs (independent keys), never above the input
    rows; one group without keys."""
    if not key_ndvs:
        return 1.0 if input_rows > 0 else 0.0
    return min(input_rows, math.prod(max(v, 1.0) for v in key_ndvs))


def occupied_groups(
    key_ndvs: Sequence[float], input_rows: float, every_value: bool = True
) -> float:
    """Groups that rows actually fill (Cardenas 1975, docs/estimator.md#groups-rows-fill):
    n rows spread over the D = product(V) combinations of two or more independent keys
    leave D (1 - (1 - 1/D)^n) of them non-empty, not min(n, D); never fewer than the
    largest key's V (each of its values is in some row; not so with `every_value` off,
    where the n draws are fewer than the rows and the V may count values no row kept), so
    one key keeps min(n, V). One group without keys."""
    if not key_ndvs:
        return 1.0 if input_rows > 0 else 0.0
    combinations = math.prod(max(v, 1.0) for v in key_ndvs)
    if sum(1 for v in key_ndvs if v > 1.0) < 2 or input_rows <= 1.0:
        return min(input_rows, combinations)
    # -expm1(n log1p(-1/D)) = 1 - (1 - 1/D)^n without cancellation for large D
    filled = combinations * -math.expm1(input_rows * math.log1p(-1.0 / combinations))
    return min(input_rows, max(filled, *key_ndvs) if every_value else filled)


def drawn_distinct(seen: float, drawn: float, most: float) -> float:
    """The distinct values D of a population of which `drawn` rows drawn at random showed
    `seen`: the D for which Cardenas's D (1 - (1 - 1/D)^n) expects that many (the method
    of moments, Haas et al. 1995, docs/estimator.md#groups-rows-fill), at most `most`; a
    sample whose rows nearly all differ says only that D is large (then `most`)."""
    if drawn <= 0 or seen <= 0:
        return 0.0

    def expected(d: float) -> float:
        return d * -math.expm1(drawn * math.log1p(-1.0 / d)) if d > 1.0 else min(d, drawn)

    if seen >= drawn or expected(most) <= seen:
        return most
    low, high = seen, most  # expected() rises with D: bisect on a log scale
    for _ in range(60):
        middle = math.sqrt(low * high)
        if expected(middle) < seen:
            low = middle
        else:
            high = middle
        if high <= low * (1.0 + 1e-6):
            break
    return high


def eqjoin_mcv(
    mcv1: Sequence[tuple[Any, float]],
    mcv2: Sequence[tuple[Any, float]],
    null1: float,
    null2: float,
    ndv1: float,
    ndv2: float,
) -> float:
    """PostgreSQL's eqjoinsel_inner: most-common values matched pairwise, the rest of each
    side spread uniformly over its other distinct values. Frequencies are fractions of
    each side's rows."""
    if not mcv1 or not mcv2:
        return (1.0 - null1) * (1.0 - null2) / max(ndv1, ndv2, 1.0)
    freq2 = dict(mcv2)
    match_prod = match1 = match2 = 0.0
    matched = 0
    for value, f1 in mcv1:
        f2 = freq2.get(value)
        if f2 is not None:
            match_prod += f1 * f2
            match1 += f1
            match2 += f2
            matched += 1
    sum1, sum2 = sum(f for _, f in mcv1), sum(f for _, f in mcv2)
    unmatch1, unmatch2 = sum1 - match1, sum2 - match2
    other1 = max(0.0, 1.0 - null1 - sum1)
    other2 = max(0.0, 1.0 - null2 - sum2)
    total1 = total2 = match_prod
    if ndv2 > len(mcv2):
        total1 += unmatch1 * other2 / (ndv2 - len(mcv2))
    if ndv2 > matched:
        total1 += other1 * (other2 + unmatch2) / (ndv2 - matched)
    if ndv1 > len(mcv1):
        total2 += unmatch2 * other1 / (ndv1 - len(mcv1))
    if ndv1 > matched:
        total2 += other2 * (other1 + unmatch1) / (ndv1 - matched)
    return min(total1, total2)


def sketch_join_rows(
    rows1: float,
    rows2: float,
    ndv1: float,
    ndv2: float,
    shared_keys: float,
    heavy1: dict[Any, float],
    heavy2: dict[Any, float],
    null1: float = 0.0,
    null2: float = 0.0,
) -> float:
    """Rows of an equi-join from what the sketches show: `shared_keys` distinct keys occur on
    both sides (Theta intersection); heavy keys present on both sides contribute count1 x
    count2 exactly; every other shared key contributes the average rows per key of each
    side's remaining rows. Heavy maps are value -> rows on that side."""
    both = set(heavy1) & set(heavy2)
    heavy_rows = sum(heavy1[v] * heavy2[v] for v in both)
    shared_rest = max(0.0, shared_keys - len(both))
    rest1 = max(0.0, rows1 * (1.0 - null1) - sum(heavy1[v] for v in both))
    rest2 = max(0.0, rows2 * (1.0 - null2) - sum(heavy2[v] for v in both))
    per_key1 = rest1 / max(ndv1 - len(both), 1.0)
    per_key2 = rest2 / max(ndv2 - len(both), 1.0)
    return heavy_rows + shared_rest * per_key1 * per_key2


MIN_COVERING_PAIRS = 12.0  # sampled pairs the one-row-per-row floor must predict to be tested
FLOOR_REFUTED_SHARE = 0.25  # a floor is refuted below this share of its predicted pairs


def composite_floor_refuted(pairs: float, covering_pairs: float) -> bool:
    """Whether the two sides' row samples refute a multi-key join's floor of one match per
    row of the smaller side (docs/estimator.md#composite-joins-the-samples-test): had every
    row of the smaller table met a row of the other, the samples (drawn at random, each row
    alone) would share about `covering_pairs` matching row pairs; far fewer (`pairs`), when
    that many were due, say its rows meet at random: a return's customer and item met
    among a catalog's sales, not a sale's own return. Poisson with a mean of 12 gives 2 or
    fewer with chance 0.0005."""
    return covering_pairs >= MIN_COVERING_PAIRS and pairs < FLOOR_REFUTED_SHARE * covering_pairs


def composite_key_completion(
    sides: Sequence[tuple[float, Sequence[float]]], keys: Sequence[bool | None] = ()
) -> float | None:
    """Given that the first key pair of a multi-key join matches, the chance the others do
    too when together they are a composite key of one side's table (lineitem-partsupp on
    part and supplier): one of that table's rows per first-key value matches, V(first) /
    rows; the larger over the sides (rows, distinct values per key) where the first key
    alone is not unique and the keys' distinct values together can cover the rows. statlas's
    rule for foreign-key-to-foreign-key joins (the independent product 1/V(part) x
    1/V(supplier) counts 800,000 partsupp keys as two billion); None: no side has such a
    key. `keys`, per side where known: whether its row sample shows the columns as a key
    (no combination twice). Where one side or more is, only those count, and the smaller
    chance wins: a sale's (item, ticket) and its return's are both keys, the return's
    pair is one of the ticket's dozen sold items, so 1/12, not the return's 1/1.7."""
    eligible: list[tuple[float, bool | None]] = []
    for position, (rows, distinct) in enumerate(sides):
        if rows <= 0 or len(distinct) < 2:
            continue
        first = max(distinct[0], 1.0)
        if first >= NEARLY_UNIQUE * rows or math.prod(max(d, 1.0) for d in distinct) < rows:
            continue
        eligible.append((first / rows, keys[position] if position < len(keys) else None))
    if not eligible:
        return None
    proven = [chance for chance, is_key in eligible if is_key]
    if proven:
        return min(proven)
    return (
        max(chance for chance, is_key in eligible if is_key is not False)
        if any(is_key is not False for _, is_key in eligible)
        else None
    )


def function_in_list_fraction(listed: int, ndv: float, null_fraction: float) -> float:
    """`f(x) IN (k values)` for a function f of one column: f takes at most V(x) values, so
    each listed value is taken as one value of x, k (1 - nulls) / V(x), capped at 1
    (docs/estimator.md#rules-beyond-the-proposal-level-sketch)."""
    if ndv <= 0:
        return 0.0
    return min(1.0, listed * (1.0 - null_fraction) / ndv)


def in_subquery_fraction(subquery_ndv: float, ndv: float, null_fraction: float) -> float:
    """`x IN (subquery)`: the subquery's distinct values taken to be among x's (the
    containment assumption of the proposal's join rule, docs/design.md#join-cardinality),
    each holding an equal share of x's non-null rows: (1 - nulls) min(1, V(sub) / V(x))."""
    if ndv <= 0:
        return 0.0
    return (1.0 - null_fraction) * min(1.0, subquery_ndv / ndv)
