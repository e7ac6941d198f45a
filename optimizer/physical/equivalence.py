"""Equivalence classes of join columns: `a.x = b.y AND b.y = c.z` puts a.x, b.y and c.z in
one class, so a join of a with c may use `a.x = c.z`, a condition the query implies without
writing it (the transitive closure of equi-join conditions, as PostgreSQL's equivalence
classes: src/backend/optimizer/path/equivclass.c). Within one group of inner joins every
conjunct holds together, so the classes' equalities may be applied in any spanning order.
"""

from __future__ import annotations

from sqlglot import exp

from optimizer.plan import ColumnRef, column_of


def column_equality(condition: exp.Expr) -> tuple[ColumnRef, ColumnRef] | None:
    """The two columns of `x = y` between two bare qualified columns, else None."""
    if not isinstance(condition, exp.EQ):
        return None
    left, right = column_of(condition.left), column_of(condition.right)
    if left is None or right is None or left == right:
        return None
    return left, right


def implied_equalities(condition: exp.Expr) -> list[tuple[ColumnRef, ColumnRef]]:
    """The column equalities a condition implies: its own, its conjuncts', and those every
    disjunct of an OR implies (`(a.x = b.y AND ..) OR (a.x = b.y AND ..)` implies a.x = b.y)."""
    if isinstance(condition, exp.Paren):
        return implied_equalities(condition.this)
    pair = column_equality(condition)
    if pair is not None:
        return [pair]
    if isinstance(condition, exp.And):
        return implied_equalities(condition.left) + implied_equalities(condition.right)
    if isinstance(condition, exp.Or):
        right = {frozenset(p) for p in implied_equalities(condition.right)}
        return [p for p in implied_equalities(condition.left) if frozenset(p) in right]
    return []


class ColumnClasses:
    """Columns known equal (union-find): each class is named by one of its members."""

    def __init__(self) -> None:
        self._parent: dict[ColumnRef, ColumnRef] = {}

    def find(self, column: ColumnRef) -> ColumnRef:
        parent = self._parent.setdefault(column, column)
        if parent != column:
            parent = self._parent[column] = self.find(parent)
        return parent

    def union(self, a: ColumnRef, b: ColumnRef) -> bool:
        """Record a = b; False when that was known already."""
        root_a, root_b = self.find(a), self.find(b)
        if root_a == root_b:
            return False
        self._parent[root_b] = root_a
        return True

    def same(self, a: ColumnRef, b: ColumnRef) -> bool:
        return self.find(a) == self.find(b)
