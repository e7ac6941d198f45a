"""The Hive Metastore's listing calls beyond names: get_table_meta (how Trino lists tables),
get_table_names_by_filter (tables by owner or parameter) and get_partition_values (the
distinct values of some partition keys), with Hive's semantics (docs/hive-metastore.md)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from hive_metastore import ttypes as hms
from sqlalchemy import Connection

from metastore.errors import StatlasError
from metastore.hive import catalog as hc
from metastore.hive.catalog import StoredPartition, StoredTable
from servers.hive_metastore.thrift_errors import thrift_errors

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"


class InvalidTableFilter(StatlasError):
    """A get_table_names_by_filter string that does not parse."""


def name_matcher(pattern: str | None) -> Callable[[str], bool]:
    """Hive's object-name patterns: `*` any characters, `|` alternatives, ignoring case;
    None, "" and "*" match everything."""
    if not pattern or pattern.strip() in ("*", ".*"):
        return lambda _name: True
    alternatives = []
    for part in pattern.split("|"):
        alternatives.append(part if ".*" in part else re.escape(part).replace(r"\*", ".*"))
    try:
        compiled = re.compile("(?i)(?:" + "|".join(alternatives) + ")")
    except re.error:
        return lambda name: name.lower() == pattern.lower()
    return lambda name: compiled.fullmatch(name) is not None


# --- get_table_names_by_filter's little language --------------------------------------------

_TOKEN = re.compile(
    r"\s*(?:(?P<lp>\()|(?P<rp>\))|(?P<op><>|!=|=|(?i:like)\b)|(?P<conj>(?i:and|or)\b)"
    r'|"(?P<dq>[^"]*)"|\'(?P<sq>[^\']*)\'|(?P<word>[A-Za-z_][\w.]*))'
)
OWNER, LAST_ACCESS, PARAMS = (
    "hive_filter_field_owner__",
    "hive_filter_field_last_access__",
    "hive_filter_field_params__",
)


TableTest = Callable[[str | None, dict[str, str]], bool]
"""A compiled table filter: a test of (owner, parameters)."""


def table_filter(text: str) -> TableTest:
    """Compile Hive's table filter (`hive_filter_field_params__k = "v"`, `<>`, `like`,
    `and`, `or`, parentheses; `hive_filter_field_owner__`) to a test of a table's owner and
    parameters. statlas keeps no last access time: a filter on it matches tables whose
    last access is 0, as a table Hive never saw read."""
    tokens: list[tuple[str, str]] = []
    text = text or ""
    position, end = 0, len(text.rstrip())
    while position < end:
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise InvalidTableFilter(f"Error parsing table filter : {text[position:][:40]!r}")
        kind = match.lastgroup or ""
        tokens.append(("str" if kind in ("dq", "sq") else kind, match.group(kind)))
        position = match.end()
    if not tokens:
        return lambda _owner, _parameters: True
    parser = _TableFilterParser(tokens, text)
    test = parser.disjunction()
    if parser.index != len(tokens):
        raise InvalidTableFilter(f"Error parsing table filter : {text!r}")
    return test


class _TableFilterParser:
    def __init__(self, tokens: list[tuple[str, str]], text: str) -> None:
        self.tokens, self.text, self.index = tokens, text, 0

    def at(self, kind: str, word: str | None = None) -> bool:
        if self.index >= len(self.tokens) or self.tokens[self.index][0] != kind:
            return False
        return word is None or self.tokens[self.index][1].lower() == word

    def take(self, kind: str) -> str:
        if not self.at(kind):
            raise InvalidTableFilter(f"Error parsing table filter : {self.text!r}")
        self.index += 1
        return self.tokens[self.index - 1][1]

    def disjunction(self) -> TableTest:
        parts = [self.conjunction()]
        while self.at("conj", "or"):
            self.take("conj")
            parts.append(self.conjunction())
        return lambda owner, parameters: any(part(owner, parameters) for part in parts)

    def conjunction(self) -> TableTest:
        parts = [self.atom()]
        while self.at("conj", "and"):
            self.take("conj")
            parts.append(self.atom())
        return lambda owner, parameters: all(part(owner, parameters) for part in parts)

    def atom(self) -> TableTest:
        if self.at("lp"):
            self.take("lp")
            inner = self.disjunction()
            self.take("rp")
            return inner
        field, operator, literal = self.take("word"), self.take("op").lower(), self.take("str")
        value = _field(field)
        if operator == "like":
            regex = re.compile(
                ".*".join(re.escape(p) for p in literal.replace(".*", "%").split("%"))
            )

            def like(owner: str | None, parameters: dict[str, str]) -> bool:
                found = value(owner, parameters)
                return found is not None and regex.fullmatch(found) is not None

            return like
        if operator == "=":
            return lambda owner, parameters: value(owner, parameters) == literal
        return lambda owner, parameters: value(owner, parameters) not in (None, literal)


def _field(field: str) -> Callable[[str | None, dict[str, str]], str | None]:
    if field == OWNER:
        return lambda owner, _parameters: owner
    if field == LAST_ACCESS:
        return lambda _owner, _parameters: "0"
    if field.startswith(PARAMS) and len(field) > len(PARAMS):
        key = field[len(PARAMS) :]
        return lambda _owner, parameters: parameters.get(key)
    raise InvalidTableFilter(f"Invalid key name in filter.  Use constants from {field}")


class ListingCalls:
    """Mixed into the handler: needs its `_read`, `_table` and `_select`."""

    _read: Callable[[Callable[[Connection], Any]], Any]
    _table: Callable[[Connection, str, str], StoredTable]
    _select: Callable[..., tuple[StoredTable, list[StoredPartition]]]
    _filter: Callable[[str, str, str], Any]

    @thrift_errors
    def get_table_meta(
        self,
        db_patterns: str,
        tbl_patterns: str,
        tbl_types: list[str],
    ) -> list[hms.TableMeta]:
        databases, tables = name_matcher(db_patterns), name_matcher(tbl_patterns)
        types = set(tbl_types or [])
        metas: list[tuple[str, str, str, str | None]] = self._read(hc.table_metas)
        return [
            hms.TableMeta(
                dbName=database, tableName=table, tableType=kind, comments=comment, catName="hive"
            )
            for database, table, kind, comment in metas
            if databases(database) and tables(table) and (not types or kind in types)
        ]

    @thrift_errors
    def get_table_names_by_filter(self, dbname: str, filter: str, max_tables: int) -> list[str]:
        test = table_filter(filter)
        database = (dbname or hc.DEFAULT_DATABASE).lower()

        def read(conn: Connection) -> list[str]:
            hc.get_database(conn, database)
            found = []
            for name in hc.database_tables(conn, database):
                stored = hc.get_stored_table(conn, database, name)
                definition = stored.definition
                if test(definition.owner, dict(definition.parameters)):
                    found.append(name)
            return found

        names: list[str] = self._read(read)
        return names if max_tables is None or max_tables < 0 else names[:max_tables]

    @thrift_errors
    def get_partition_values(
        self, request: hms.PartitionValuesRequest
    ) -> hms.PartitionValuesResponse:
        """Without a filter, the values of the asked keys, one row per partition (distinct
        unless applyDistinct is false); with one, every key's values of the partitions it
        selects, by name (descending unless ascending). Failures are MetaExceptions, as
        Hive's "Error retrieving partition values"."""
        try:
            return self._partition_values(request)
        except StatlasError as error:
            raise hms.MetaException(message=f"Error retrieving partition values: {error}") from None

    def _partition_values(self, request: hms.PartitionValuesRequest) -> hms.PartitionValuesResponse:
        db, tbl = request.dbName, request.tblName
        limit = request.maxParts if request.maxParts is not None and request.maxParts >= 0 else None
        if request.filter:
            stored, found = self._select(db, tbl, self._filter(db, tbl, request.filter))
            names = sorted((p.name for p in found), reverse=request.ascending is False)
            every = [list(hc.raw_values(n, len(stored.info.partition_keys))) for n in names]
            return _rows(every[:limit] if limit is not None else every)

        def read(conn: Connection) -> tuple[StoredTable, list[str]]:
            stored = self._table(conn, db, tbl)
            return stored, hc.partition_names(conn, stored.info)

        stored, names = self._read(read)
        keys = [k.name.lower() for k in stored.info.partition_keys]
        asked = [f.name.lower() for f in request.partitionKeys or []]
        missing = [k for k in asked if k not in keys]
        if missing or not asked:
            raise hc.InvalidObject(
                f"partition key {(missing or ['(none)'])[0]} is not a key of {db}.{tbl}"
            )
        positions = [keys.index(k) for k in asked]
        rows: list[list[str | None]] = []
        seen: set[tuple[str | None, ...]] = set()
        for name in names:
            values = hc.raw_values(name, len(keys))
            row = tuple(values[i] for i in positions)
            if request.applyDistinct is not False:
                if row in seen:
                    continue
                seen.add(row)
            rows.append(list(row))
            if limit is not None and len(rows) >= limit:
                break
        return _rows(rows)


def _rows(rows: Sequence[Sequence[str | None]]) -> hms.PartitionValuesResponse:
    return hms.PartitionValuesResponse(
        partitionValues=[
            hms.PartitionValuesRow(
                row=[v if v is not None else "__HIVE_DEFAULT_PARTITION__" for v in r]
            )
            for r in rows
        ]
    )
