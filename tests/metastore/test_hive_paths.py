"""Hive's path escaping round-trips exactly, as Hive and Spark write directories."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from metastore.partitions.names import (
    DEFAULT_PARTITION_NAME,
    escape_path_name,
    partition_name,
    split_partition_component,
    unescape_path_name,
)


def test_known_escapes() -> None:
    assert escape_path_name("a/b") == "a%2Fb"
    assert escape_path_name("10:30") == "10%3A30"
    assert escape_path_name("x=y%") == "x%3Dy%25"
    assert escape_path_name("zürich 東京") == "zürich 東京"  # non-ASCII is not escaped
    assert unescape_path_name("100%") == "100%"  # not an escape: kept


def test_default_partition_is_null() -> None:
    assert split_partition_component(f"dt={DEFAULT_PARTITION_NAME}") == ("dt", None)
    assert split_partition_component("nokey") is None
    assert split_partition_component("DT=1") == ("dt", "1")


@given(
    st.text(
        alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"),
        max_size=30,
    )
)
def test_round_trip(value: str) -> None:
    escaped = escape_path_name(value)
    assert "/" not in escaped
    assert "=" not in escaped
    assert unescape_path_name(escaped) == value
    assert split_partition_component(partition_name(["k"], [value])) == (
        "k",
        None if value == DEFAULT_PARTITION_NAME else value,
    )
