"""The map joins of a plan as `explain --json` marks them (`explained_map_joins`) and as
prune's analysis takes them (`pruned_map_joins`), in one form to compare."""

from __future__ import annotations

from collections import Counter
from typing import Any

from optimizer.estimate.explain import detail
from optimizer.plan import Node, Scan, walk
from pruner.candidates import Analysis

# (join detail, aliases of the streamed side, aliases of the hashed side)
Signature = tuple[str, frozenset[str], frozenset[str]]


def _json_aliases(node: dict[str, Any]) -> frozenset[str]:
    """The aliases of the scans under an `explain --json` node ("t", "t AS a", "t AS a
    partitions: ...")."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if current["op"] == "scan":
            found.add(current["detail"].split(" partitions: ")[0].split(" AS ")[-1])
        stack.extend(current["children"])
    return frozenset(found)


def explained_map_joins(data: dict[str, Any]) -> tuple[Counter[Signature], int]:
    """The joins `explain --json` marks `map`, and how many joins it shows in all."""
    marked: Counter[Signature] = Counter()
    joins = 0
    stack = [data["plan"]]
    while stack:
        node = stack.pop()
        stack.extend(node["children"])
        if node["op"] != "join":
            continue
        joins += 1
        if node["algorithm"] == "map":
            streamed = 0 if node["streamed"] == "left" else 1
            big, small = node["children"][streamed], node["children"][1 - streamed]
            marked[(node["detail"], _json_aliases(big), _json_aliases(small))] += 1
    return marked, joins


def _aliases(node: Node) -> frozenset[str]:
    return frozenset(n.alias for n in walk(node) if isinstance(n, Scan))


def pruned_map_joins(analysis: Analysis) -> Counter[Signature]:
    """The joins prune's analysis treats as map joins."""
    return Counter((detail(m.join), _aliases(m.big), _aliases(m.small)) for m in analysis.map_joins)
