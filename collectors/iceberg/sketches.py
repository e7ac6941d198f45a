"""Which Theta sketch of a column an Iceberg statistics file publishes. Iceberg's own
sketches hash each value's single-value serialisation (Iceberg spec, Appendix D). statlas's
Theta sketch (collectors/jvm LiveState) hashes a long (bigint, timestamp microseconds) as its
8 little-endian bytes and a string or binary as its bytes, which is that serialisation; a
column of such a type with a Theta sketch publishes it. Every other scalar column of an
Iceberg table gets a second Theta sketch fed the serialised values (ColumnPlan.iceberg,
stored as column_stats.iceberg_theta): ints and dates (4 bytes), floats, doubles,
decimals, booleans, timestamps without a zone, and columns whose distinct count is an HLL."""

from __future__ import annotations

import dataclasses

from collectors.aggregations import ColumnPlan

SERIALIZED_ALIKE = ("bigint", "string", "binary", "timestamp")


def own_theta_serves(plan: ColumnPlan) -> bool:
    """Whether the column's statlas Theta sketch is the one Iceberg would make."""
    return plan.has_theta and plan.type in SERIALIZED_ALIKE


def with_iceberg_sketches(plans: list[ColumnPlan]) -> list[ColumnPlan]:
    """The plans of an Iceberg table's scan: a serialised-value sketch where needed."""
    return [
        dataclasses.replace(plan, iceberg=True)
        if plan.has_sketches and len(plan.path) <= 1 and not own_theta_serves(plan)
        else plan
        for plan in plans
    ]
