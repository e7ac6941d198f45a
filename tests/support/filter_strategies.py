"""Hive Metastore filter strings for property tests, each with its truth over a row: the
compound part shared by test_filter_semantics.py and test_hms_filters.py (AND, OR, NOT and
parentheses over atoms each test file draws its own way), and a three-valued (SQL)
evaluation of it to compare servers.hive_metastore.filters' compile_filter with.

Keywords come out in both cases (Hive's are case-insensitive): an AND or OR of three parts
upper-cased, NOT drawn either way, both before a plain atom and before `(...)`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hypothesis import strategies as st

from metastore.types import KeyValue

Row = tuple[KeyValue, ...]
Truth = bool | None  # SQL's three values


@dataclass(frozen=True)
class Expr:
    text: str
    truth: Callable[[Row], Truth]
    exact: bool = True  # built from pieces the compiler is expected to compile exactly
    compound: str = ""  # "", "and", "or", "not"


def conjoin(kind: str, parts: Sequence[Expr]) -> Expr:
    """The AND or OR ("and", "or") of parts."""

    def wrap(part: Expr) -> str:
        # AND binds tighter than OR: an AND inside an OR needs no parentheses
        if part.compound == "or" or (part.compound == "and" and kind == "and"):
            return f"({part.text})"
        return part.text

    truths = [p.truth for p in parts]

    def truth(row: Row) -> Truth:
        values = [t(row) for t in truths]
        decisive = kind == "or"  # True decides an OR, False an AND
        if decisive in values:
            return decisive
        return None if None in values else not decisive

    keyword = kind.upper() if len(parts) == 3 else kind  # keywords are case-insensitive
    return Expr(f" {keyword} ".join(map(wrap, parts)), truth, all(p.exact for p in parts), kind)


def negate(part: Expr, keyword: str = "not") -> Expr:
    """NOT part, spelt keyword ("not" or "NOT"): `not x` for a plain atom, `not (x)` for a
    compound."""
    inner = part.truth

    def truth(row: Row) -> Truth:
        value = inner(row)
        return None if value is None else not value

    text = f"{keyword} ({part.text})" if part.compound else f"{keyword} {part.text}"
    return Expr(text, truth, part.exact, "not")


def parenthesise(part: Expr) -> Expr:
    return Expr(f"({part.text})", part.truth, part.exact)


def filters(atoms: st.SearchStrategy[Expr], max_leaves: int = 6) -> st.SearchStrategy[Expr]:
    """Filters of up to max_leaves atoms: ANDs and ORs of two or three, NOTs, parentheses."""
    return st.recursive(
        atoms,
        lambda children: st.one_of(
            st.builds(
                conjoin, st.sampled_from(["and", "or"]), st.lists(children, min_size=2, max_size=3)
            ),
            st.builds(negate, children, st.sampled_from(["not", "NOT"])),
            st.builds(parenthesise, children),
        ),
        max_leaves=max_leaves,
    )
