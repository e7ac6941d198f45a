"""The lookup's fast path on PostgreSQL (IN lists only): the cached catalog entry follows
every change of the table, a connection the server dropped is replaced, and the shortcut
for lists of ISO dates writes exactly what the general coercion would."""

from __future__ import annotations

import datetime as dt
import shutil
import uuid
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from metastore import Metastore
from metastore.catalog.lookup import _iso_dates_literal, _state
from metastore.errors import InvalidValue, UnknownColumn, UnknownTable
from metastore.partitions.store import _pg_array_literal
from metastore.types import KeyType
from tests.support.databases import PG_URL
from tests.support.partitions import write_partitions

DATE = KeyType("date")


def sales(ms: Metastore, root: Path, days: list[str]) -> None:
    write_partitions(root, ["dt", "region"], [[d, r] for d in days for r in ("emea", "apac")])
    ms.register_table("sales", str(root))


def test_fast_path_serves_in_lists_on_postgres_only(metastore: Metastore, tmp_path: Path) -> None:
    sales(metastore, tmp_path / "sales", ["2024-01-01", "2024-01-02"])
    found = metastore.partitions("sales", {"dt": ["2024-01-02"], "region": ["emea", None]})
    assert found.names() == ["dt=2024-01-02/region=emea"]
    cached = _state(metastore.engine).tables
    assert ("sales" in cached) == (metastore.engine.dialect.name == "postgresql")


def test_cached_entry_follows_refreshes_and_drops(metastore: Metastore, tmp_path: Path) -> None:
    root = tmp_path / "sales"
    sales(metastore, root, ["2024-01-01", "2024-01-02"])
    emea = {"region": ["emea"]}
    assert len(metastore.partitions("sales", emea)) == 2
    # a refresh that adds and removes partitions: the next lookup sees them
    write_partitions(root, ["dt", "region"], [["2024-01-03", "emea"]])
    shutil.rmtree(root / "dt=2024-01-01")
    metastore.register_table("sales", str(root))
    assert metastore.partitions("sales", emea).names() == [
        "dt=2024-01-02/region=emea",
        "dt=2024-01-03/region=emea",
    ]
    # dropped: unknown, although its entry was cached
    metastore.drop_table("sales")
    with pytest.raises(UnknownTable, match="unknown table 'sales'"):
        metastore.partitions("sales", emea)
    # registered again with other keys: the new keys, not the cached ones
    other = tmp_path / "other"
    write_partitions(other, ["day"], [["2024-02-01"], ["2024-02-02"]])
    metastore.register_table("sales", str(other))
    with pytest.raises(UnknownColumn, match="unknown partition key 'region'"):
        metastore.partitions("sales", emea)
    assert metastore.partitions("sales", {"day": ["2024-02-02"]}).names() == ["day=2024-02-02"]


def test_errors_are_the_general_paths(metastore: Metastore, tmp_path: Path) -> None:
    sales(metastore, tmp_path / "sales", ["2024-01-01"])
    metastore.partitions("sales", {"dt": ["2024-01-01"]})  # cached
    for bad, message in [
        ("2024-02-30", "'2024-02-30' is not a valid date for key dt"),
        ("0000-01-01", "'0000-01-01' is not a valid date for key dt"),
        ("20240101", "'20240101' is not a valid date for key dt"),
    ]:
        with pytest.raises(InvalidValue) as raised:
            metastore.partitions("sales", {"dt": ["2024-01-01", bad]})
        assert str(raised.value) == message
    assert metastore.partitions("sales", {"dt": [" 2024-01-01 ", dt.date(2024, 1, 1)]}).names() == [
        "dt=2024-01-01/region=apac",
        "dt=2024-01-01/region=emea",
    ]
    empty = metastore.partitions("sales", {"dt": ["2030-01-01"]})
    assert len(empty) == 0
    assert empty.as_json()["partitions"] == []


@pytest.mark.postgres
def test_connections_the_server_dropped_are_replaced(tmp_path: Path, pg_url: str) -> None:
    """The database restarts (here: every connection of this metastore is terminated): the
    next lookups answer as before, on new connections."""
    name = f"statlas_test_{uuid.uuid4().hex[:8]}"
    url = make_url(pg_url).update_query_dict({"application_name": name})
    ms = Metastore(url.render_as_string(hide_password=False))
    try:
        ms.upgrade()
        sales(ms, tmp_path / "sales", ["2024-01-01", "2024-01-02"])
        query = {"dt": ["2024-01-02"]}
        assert len(ms.partitions("sales", query)) == 2
        assert len(ms.partitions("sales", query)) == 2  # the fast path's own connection
        admin = create_engine(PG_URL)
        with admin.connect() as conn:
            terminated = conn.execute(
                text(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE application_name = :name"
                ),
                {"name": name},
            ).scalar_one()
        admin.dispose()
        assert terminated >= 1
        for _ in range(3):
            assert ms.partitions("sales", query).names() == [
                "dt=2024-01-02/region=apac",
                "dt=2024-01-02/region=emea",
            ]
    finally:
        ms.dispose()
    assert not _state(ms.engine).idle  # closed with the engine


DATE_TEXT = st.one_of(
    st.dates().map(dt.date.isoformat),
    st.sampled_from(
        [
            "2024-02-29",
            "2023-02-29",
            "2024-02-30",
            "2024-13-01",
            "0000-01-01",
            "0001-01-01",
            "9999-12-31",
            "2024-1-5",
            "20240105",
            " 2024-01-05",
            "2024-01-05 ",
            "2024-01-05,2024-01-06",
            "٢٠٢٤-٠١-٠٥",  # noqa: RUF001 (digits, but not ASCII ones)
            "2024-W01-1",
            "__HIVE_DEFAULT_PARTITION__",
            "",
        ]
    ),
    st.text(alphabet="0123456789-, ", max_size=12),
)
DATE_VALUES = st.lists(
    st.one_of(DATE_TEXT, DATE_TEXT, st.none(), st.dates(), st.integers()), min_size=1, max_size=8
)


@given(DATE_VALUES)
def test_iso_date_shortcut_writes_what_coercion_writes(values: list[object]) -> None:
    literal = _iso_dates_literal(DATE, values)
    if literal is None:
        return  # the general coercion answers (or refuses) these
    coerced = DATE.coerce_many(values)
    assert None not in coerced
    assert literal == _pg_array_literal(list(dict.fromkeys(coerced)), DATE)
