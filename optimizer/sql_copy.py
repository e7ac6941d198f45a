"""A copy of a sqlglot tree that finds, for a node of the original, its node in the copy.

A rewrite that must leave a statement as it is works on a copy, yet knows the nodes it
rewrites by the original's (a plan join's SELECT, a subquery of a predicate). sqlglot nodes
compare and hash by structure (two subqueries written alike are equal), so they cannot key
a dict themselves: the pairs are matched once, by position in one walk of both trees, before
the copy changes, and found by the original node's identity while both trees are alive.
"""

from __future__ import annotations

from typing import TypeVar

from sqlglot import exp

E = TypeVar("E", bound=exp.Expr)


class TreeCopy:
    def __init__(self, original: exp.Expr) -> None:
        self.original = original  # kept alive: its nodes' identities key the pairs
        self.root = original.copy()
        self._pairs = {
            id(node): copy for node, copy in zip(original.walk(), self.root.walk(), strict=True)
        }

    def __getitem__(self, node: E) -> E:
        """The copy of `node`, a node of the original (KeyError for any other)."""
        copy = self._pairs[id(node)]
        assert isinstance(copy, type(node))
        return copy
