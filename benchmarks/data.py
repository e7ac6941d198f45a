"""TPC-H benchmark data, partitioned as a data lake keeps it, plus skewed variants.

    python benchmarks/data.py --scale 1 [--out benchmarks/.data] [--zipf 1.0,1.5]

Generates TPC-H with the `tpchgen-cli` generator (PyPI) once per scale, then writes, under
OUT/tpch-sf<scale>/:

  uniform/lineitem/l_shipdate=YYYY-MM-DD/...      lineitem by ship date (~2,500 partitions)
  uniform/lineitem_by_month/l_shipmonth=YYYY-MM/  lineitem by ship month
  uniform/orders/o_orderdate=YYYY-MM-DD/...       orders by order date
  uniform/{customer,part,supplier,partsupp,nation,region}/   unpartitioned
  zipf-<z>/...                                    the same layout, skewed (below)

The skewed variants redraw foreign keys from a Zipf law with exponent z over a random
permutation of the key domain: o_custkey over customers, l_partkey over parts, and
l_suppkey as one of the four suppliers TPC-H's partsupp gives that part (so lineitem still
joins partsupp). They also make one pair of columns correlated: l_discount follows
l_quantity (discount = quantity/50 x 0.10, +-0.01). Everything else is TPC-H's own data.
Outputs are cached: a directory that exists is not written again.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

TABLES = ("lineitem", "orders", "customer", "part", "supplier", "partsupp", "nation", "region")
DIMENSIONS = ("customer", "part", "supplier", "partsupp", "nation", "region")
DEFAULT_OUT = Path(__file__).resolve().parent / ".data"
SEED = 20261122


def generate_raw(scale: float, target: Path) -> Path:
    """TPC-H at `scale` as one Parquet file per table (tpchgen-cli), cached."""
    raw = target / "raw"
    if all((raw / f"{t}.parquet").exists() for t in TABLES):
        return raw
    tmp = target / "raw.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tool = Path(sys.executable).parent / "tpchgen-cli"
    subprocess.run([str(tool), "parquet", "-s", str(scale), f"--output-dir={tmp}"], check=True)
    shutil.rmtree(raw, ignore_errors=True)
    tmp.rename(raw)
    return raw


def read(raw: Path, table: str) -> pa.Table:
    """A raw table with Spark-friendly types (string views become plain strings)."""
    data = pq.read_table(raw / f"{table}.parquet")
    fields = [
        pa.field(f.name, pa.string() if pa.types.is_string_view(f.type) else f.type, f.nullable)
        for f in data.schema
    ]
    return data.cast(pa.schema(fields))


def write(data: pa.Table, directory: Path, partition_by: str | None = None) -> None:
    """Write Parquet under `directory`, Hive-partitioned by one column if given."""
    tmp = directory.with_name(directory.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    if partition_by is None:
        tmp.mkdir(parents=True)
        pq.write_table(data, tmp / "part-00000.parquet")
    else:
        ds.write_dataset(
            data.sort_by(partition_by),  # contiguous partitions: one file each
            tmp,
            format="parquet",
            partitioning=ds.partitioning(
                pa.schema([data.schema.field(partition_by)]), flavor="hive"
            ),
            basename_template="part-{i}.parquet",
            max_partitions=100_000,
            max_rows_per_group=1 << 20,
        )
    shutil.rmtree(directory, ignore_errors=True)
    tmp.rename(directory)


def zipf_keys(domain: np.ndarray, size: int, z: float, rng: np.random.Generator) -> np.ndarray:
    """`size` draws from `domain` with P(rank k) proportional to 1/k^z, ranks randomly
    assigned to keys."""
    ranks = np.arange(1, len(domain) + 1, dtype=np.float64)
    weights = ranks**-z
    weights /= weights.sum()
    hot_order = rng.permutation(domain)
    return hot_order[rng.choice(len(domain), size=size, p=weights)]


def partsupp_supplier(partkey: np.ndarray, which: np.ndarray, suppliers: int) -> np.ndarray:
    """TPC-H's i-th supplier of a part (spec 4.2.3: PS_SUPPKEY)."""
    return (partkey + which * (suppliers // 4 + (partkey - 1) // suppliers)) % suppliers + 1


def skew(tables: dict[str, pa.Table], z: float, seed: int) -> dict[str, pa.Table]:
    rng = np.random.default_rng(seed)
    orders, lineitem = tables["orders"], tables["lineitem"]
    customers = tables["customer"]["c_custkey"].to_numpy()
    parts = tables["part"]["p_partkey"].to_numpy()
    suppliers = len(tables["supplier"])

    custkey = zipf_keys(customers, len(orders), z, rng)
    orders = orders.set_column(
        orders.schema.get_field_index("o_custkey"), "o_custkey", pa.array(custkey, pa.int64())
    )
    partkey = zipf_keys(parts, len(lineitem), z, rng)
    suppkey = partsupp_supplier(partkey, rng.integers(0, 4, len(lineitem)), suppliers)
    quantity = lineitem["l_quantity"].cast(pa.float64()).to_numpy()
    discount = np.clip(
        np.round(quantity / 50 * 0.10 + rng.uniform(-0.01, 0.01, len(quantity)), 2), 0.0, 0.10
    )
    for name, values, kind in (
        ("l_partkey", partkey, pa.int64()),
        ("l_suppkey", suppkey, pa.int64()),
        ("l_discount", discount, pa.float64()),
    ):
        column = pa.array(values, kind)
        if name == "l_discount":
            column = pc.cast(column, lineitem.schema.field("l_discount").type)
        lineitem = lineitem.set_column(lineitem.schema.get_field_index(name), name, column)
    return {**tables, "orders": orders, "lineitem": lineitem}


def write_variant(tables: dict[str, pa.Table], directory: Path) -> None:
    if (directory / "_COMPLETE").exists():
        return
    directory.mkdir(parents=True, exist_ok=True)
    lineitem = tables["lineitem"]
    write(lineitem, directory / "lineitem", "l_shipdate")
    month = pc.strftime(lineitem["l_shipdate"], format="%Y-%m")
    write(
        lineitem.append_column("l_shipmonth", month), directory / "lineitem_by_month", "l_shipmonth"
    )
    write(tables["orders"], directory / "orders", "o_orderdate")
    for name in DIMENSIONS:
        write(tables[name], directory / name)
    (directory / "_COMPLETE").write_text("")


def build(scale: float, out: Path, zipfs: list[float]) -> Path:
    target = out / f"tpch-sf{scale:g}"
    raw = generate_raw(scale, target)
    tables = {t: read(raw, t) for t in TABLES}
    write_variant(tables, target / "uniform")
    for z in zipfs:
        write_variant(skew(tables, z, SEED), target / f"zipf-{z:g}")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--zipf", default="1.0,1.5", help="exponents of the skewed variants")
    args = parser.parse_args()
    zipfs = [float(z) for z in args.zipf.split(",") if z.strip()]
    target = build(args.scale, args.out, zipfs)
    print(f"TPC-H SF {args.scale:g} written under {target}")


if __name__ == "__main__":
    main()
