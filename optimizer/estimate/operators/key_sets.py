"""The key set of a scan's column: the table's column under the conjuncts filtering the scan,
written without table qualifiers, so that two scans of a table filtered alike name one set
(optimizer.estimate.column.KeySet). Scans set them, filters over a scan narrow them, and a
join compares them to tell keys one side's semi join took from the other's
(docs/design.md#join-cardinality)."""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp

from optimizer.estimate.column import ColumnEstimate, KeySet, changed
from optimizer.plan import ColumnRef, conjuncts


def with_key_sets(
    columns: dict[ColumnRef, ColumnEstimate], table: str, conditions: frozenset[str]
) -> dict[ColumnRef, ColumnEstimate]:
    """A scan's columns, each the key set of `table`'s column under `conditions`."""
    return {
        ref: changed(c, key_set=KeySet(table, ref[1], conditions, c.ndv.value))
        for ref, c in columns.items()
    }


def with_conditions(
    columns: dict[ColumnRef, ColumnEstimate], conditions: list[exp.Expr]
) -> dict[ColumnRef, ColumnEstimate]:
    """Columns of a filtered scan: their key sets narrowed by more conditions."""
    more = frozenset(unqualified(c) for c in conditions)
    result = {}
    for ref, column in columns.items():
        found = column.key_set
        if found is not None:
            narrowed = KeySet(found.table, found.column, found.conditions | more, column.ndv.value)
            column = changed(column, key_set=narrowed)
        result[ref] = column
    return result


def conjuncts_of(conditions: Iterable[exp.Expr]) -> list[exp.Expr]:
    return [part for condition in conditions for part in conjuncts(condition)]


def unqualified(condition: exp.Expr) -> str:
    """A condition's SQL with its columns' table qualifiers left out."""
    copy = condition.copy()
    for column in copy.find_all(exp.Column):
        column.set("table", None)
    return copy.sql(copy=False)  # the copy is this function's own
