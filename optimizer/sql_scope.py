"""What the SELECTs of a qualified statement define and read: their FROM items, the aliases
those define, the relation aliases an expression reads from outside (a subquery's
correlation), and every name a rewrite may not give a relation it adds. Analysis only:
nothing here changes a statement."""

from __future__ import annotations

from sqlglot import exp

DEFAULT_DB = "statlas_default_db"  # sqlglot wants one nesting level: bare names go under it


def table_name(table: exp.Table) -> str:
    """The catalog name a table reference reads (lower case, without DEFAULT_DB)."""
    parts = [p.name for p in table.parts]
    if parts and parts[0] == DEFAULT_DB:
        parts = parts[1:]
    return ".".join(parts).lower()


def from_items(select: exp.Select) -> list[exp.Expr]:
    """The relations of a SELECT's FROM clause and JOIN list, in written order."""
    from_ = select.args.get("from_")
    return ([from_.this] if from_ is not None else []) + [
        j.this for j in select.args.get("joins") or ()
    ]


def plain_from_items(select: exp.Select) -> list[exp.Expr] | None:
    """The SELECT's FROM items, or None when its joins are not all plain inner joins."""
    from_ = select.args.get("from_")
    if from_ is None:
        return None
    items = [from_.this]
    for join in select.args.get("joins") or ():
        if not is_plain_join(join):
            return None
        items.append(join.this)
    return items


def is_plain_join(join: exp.Join) -> bool:
    """An inner or cross join without USING (a comma of the FROM list is one)."""
    side, kind = (join.side or "").upper(), (join.kind or "").upper()
    return not side and kind in ("", "INNER", "CROSS") and not join.args.get("using")


def scope_aliases(select: exp.Select) -> set[str]:
    """The aliases a SELECT's FROM and JOIN list define."""
    result = set()
    for source in from_items(select):
        if isinstance(source, exp.Table):
            result.add((source.alias_or_name or table_name(source)).lower())
        elif source.alias_or_name:
            result.add(source.alias_or_name.lower())
    return result


def free_aliases(expression: exp.Expr, bound: set[str]) -> set[str]:
    """Relation aliases `expression` reads that neither `bound` nor a SELECT inside it
    defines (a subquery's correlation)."""
    found: set[str] = set()

    def visit(node: exp.Expr, bound: set[str]) -> None:
        if isinstance(node, exp.Select):
            bound = bound | scope_aliases(node)
        if isinstance(node, exp.Column) and node.table and node.table.lower() not in bound:
            found.add(node.table.lower())
        for child in node.iter_expressions():
            visit(child, bound)

    visit(expression, bound)
    return found


def relation_names(statement: exp.Expr) -> set[str]:
    """Every table name and alias of a statement (lower case): names a rewrite may not
    give a relation it adds."""
    names = {t.name.lower() for t in statement.find_all(exp.Table)}
    return names | {a.name.lower() for a in statement.find_all(exp.TableAlias)}


def fresh_alias(prefix: str, taken: set[str]) -> str:
    """`prefix` numbered from 1 to the first name not in `taken` (a relation_names set),
    which then holds it."""
    number = 1
    while f"{prefix}{number}" in taken:
        number += 1
    taken.add(f"{prefix}{number}")
    return f"{prefix}{number}"
