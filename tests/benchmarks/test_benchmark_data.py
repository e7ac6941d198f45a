"""benchmarks/data.py: TPC-H partitioned as a lake keeps it, and its skewed variants."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pyarrow.dataset as ds
import pytest

from metastore import Metastore
from tests.support.repository import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import data


@pytest.fixture(scope="module")
def tpch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return data.build(0.01, tmp_path_factory.mktemp("tpch"), [1.5])


def read(root: Path, table: str) -> ds.Dataset:
    return ds.dataset(root / table, format="parquet", partitioning="hive")


@pytest.mark.slow
def test_layout_and_registration(tpch: Path, tmp_path: Path) -> None:
    uniform = tpch / "uniform"
    days = list((uniform / "lineitem").iterdir())
    assert 2400 < len(days) < 2600
    assert all(d.name.startswith("l_shipdate=") for d in days)
    assert all(len(list(d.iterdir())) == 1 for d in days[:50])  # one file per partition
    raw_rows = data.read(tpch / "raw", "lineitem").num_rows
    assert read(uniform, "lineitem").count_rows() == raw_rows
    assert read(uniform, "lineitem_by_month").count_rows() == raw_rows
    ms = Metastore(f"sqlite:///{tmp_path / 'm.db'}")
    report = ms.register_table("lineitem", str(uniform / "lineitem"))
    assert [(k.name, str(k.type)) for k in report.partition_keys] == [("l_shipdate", "date")]
    assert report.added == len(days)
    month = ms.register_table("lineitem_by_month", str(uniform / "lineitem_by_month"))
    months = len(list((uniform / "lineitem_by_month").iterdir()))
    assert str(month.partition_keys[0].type) == "string"
    assert month.added == months
    assert 80 <= months <= 84  # 1992-01 .. 1998-12
    assert ms.register_table("nation", str(uniform / "nation")).partition_keys == []
    ms.dispose()


@pytest.mark.slow
def test_skewed_variant(tpch: Path) -> None:
    uniform, skewed = tpch / "uniform", tpch / "zipf-1.5"
    base = read(uniform, "lineitem").to_table(columns=["l_partkey"])["l_partkey"].to_numpy()
    line = read(skewed, "lineitem").to_table(
        columns=["l_partkey", "l_suppkey", "l_quantity", "l_discount"]
    )
    partkey = line["l_partkey"].to_numpy()
    # the hottest part carries a large share under z = 1.5, a tiny one in TPC-H itself
    assert np.bincount(partkey).max() / len(partkey) > 0.2
    assert np.bincount(base).max() / len(base) < 0.01
    # every (partkey, suppkey) is still a row of partsupp
    partsupp = read(skewed, "partsupp").to_table(columns=["ps_partkey", "ps_suppkey"])
    pairs = set(
        zip(partsupp["ps_partkey"].to_pylist(), partsupp["ps_suppkey"].to_pylist(), strict=True)
    )
    sample = list(zip(partkey[:2000].tolist(), line["l_suppkey"].to_pylist()[:2000], strict=True))
    assert all(pair in pairs for pair in sample)
    quantity = line["l_quantity"].to_numpy().astype(float)
    discount = line["l_discount"].to_numpy().astype(float)
    assert np.corrcoef(quantity, discount)[0, 1] > 0.9
    orders = read(skewed, "orders").to_table(columns=["o_custkey"])["o_custkey"].to_numpy()
    assert np.bincount(orders).max() / len(orders) > 0.2
