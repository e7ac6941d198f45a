"""The collection scan as ONE JVM pass over the rows (collectors/jvm/src, statlas.collect.
PartitionScan): every column's statistics of every partition updated row by row, instead of
one of Spark's typed aggregates per statistic and column. Its result has the schema of the
Spark aggregation (collectors.aggregations), with the same sketches fed the same values,
so the two scans' statistics merge; `scan_method` picks one:

  jvm     the one-pass scan (the default where its jar is built: `make install` builds it
          with the JDK's javac against PySpark's own jars)
  spark   one aggregation of Spark's built-in aggregates (no jar needed)

STATLAS_SCAN=jvm|spark|auto chooses; auto (the default) is jvm when the jar is there and
the session's JVM has it, else spark.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from collectors.aggregations import TOP_K_ITEMS, ColumnPlan, forced_columns, quoted, sampled
from collectors.forced_keys import ForcedKeys
from metastore.errors import StatlasError
from metastore.statistics.histograms import HLL_LG_K, KLL_K, THETA_LG_K

SOURCES = Path(__file__).resolve().parent / "jvm" / "src"
JAR = Path(__file__).resolve().parent / "jvm" / "statlas-collect.jar"
METHODS = ("auto", "jvm", "spark")
# the scalar types the one-pass scan describes fully (nested and void columns: counts only)
SCALAR_TYPES = (
    "boolean",
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "float",
    "double",
    "date",
    "timestamp",
    "timestamp_ntz",
    "string",
    "binary",
)


class ScanUnavailable(StatlasError):
    """STATLAS_SCAN=jvm, but the one-pass scan cannot run in this session."""


def top_k_map_size(items: int = TOP_K_ITEMS) -> int:
    """Spark's ApproxTopK.calMaxMapSize: the power of two above items / 0.75."""
    needed = -(-items * 4 // 3)
    size = 1
    while size < needed:
        size *= 2
    return size


def packed(values: list[str]) -> str:
    """A list of strings as the JVM's `Packed` reads it, in one string: each as its length in
    UTF-16 units (Java's), a colon and itself. py4j fills a Java array one round trip per
    element: a small scan's arguments took longer than its rows."""
    return "".join(f"{len(v.encode('utf-16-le')) // 2}:{v}" for v in values)


def spec(
    plan: ColumnPlan,
    theta_lg_k: int = THETA_LG_K,
    kll_k: int = KLL_K,
    theta_least: int | None = None,
) -> str:
    """The column's plan as PartitionScan reads it (ColumnSpec.parse), each partition's
    Theta sketch of `theta_lg_k` (histograms.partition_theta_lg_k; of an integral column,
    trimmed down to `theta_least` where its values are sparse: histograms.sparse_key_lg_k)
    and KLL sketch of `kll_k` (histograms.partition_kll_k)."""
    items = [f"alias={plan.alias}"]
    if plan.orderable:
        items.append("minmax")
    if plan.has_length:
        items.append("length")
    if plan.has_sketches:
        items.append("distinct=theta" if plan.has_theta else "distinct=hll")
        if plan.has_kll:
            items.append("kll")
        items.append(f"topk={plan.top_k_items}")
        if plan.iceberg:
            items.append("iceberg")
    items += [f"hll={HLL_LG_K}", f"theta={theta_lg_k}", f"k={kll_k}", f"items={top_k_map_size()}"]
    if theta_least is not None and theta_least < theta_lg_k:
        items.append(f"thetaleast={theta_least}")
    return ",".join(items)


def supports(plans: list[ColumnPlan]) -> bool:
    """Whether every column is of a type the one-pass scan describes as Spark would."""
    return all(
        p.nested
        or p.type == "void"
        or p.type in SCALAR_TYPES
        or (p.type.startswith("decimal") and p.type != "decimal")
        for p in plans
    )


def scan_jar(build: bool = True) -> Path | None:
    """The scan's jar, (re)built from its sources when missing or older than them and a
    javac is at hand; None without one."""
    sources = sorted(SOURCES.rglob("*.java"))
    newest = max(s.stat().st_mtime for s in sources)
    if JAR.exists() and JAR.stat().st_mtime >= newest:
        return JAR
    javac = _javac()
    if not build or javac is None:
        return None
    import pyspark

    classpath = str(Path(pyspark.__file__).resolve().parent / "jars" / "*")
    with tempfile.TemporaryDirectory(prefix="statlas-jar-") as work:
        classes = Path(work) / "classes"
        done = subprocess.run(
            [javac, "--release", "17", "-nowarn", "-d", str(classes), "-cp", classpath]
            + [str(s) for s in sources],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise StatlasError(
                "building the collection scan's jar failed: " + " ".join(done.stderr.split())[:300]
            )
        staged = Path(work) / JAR.name
        with zipfile.ZipFile(staged, "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
            for path in sorted(classes.rglob("*.class")):
                jar.write(path, path.relative_to(classes).as_posix())
        shutil.copy2(staged, JAR.with_suffix(f".{os.getpid()}.tmp"))
        os.replace(JAR.with_suffix(f".{os.getpid()}.tmp"), JAR)  # atomic: builds may race
    return JAR


def _javac() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "javac").exists():
        return str(Path(home) / "bin" / "javac")
    return shutil.which("javac")


def scan_method(session: Any, plans: list[ColumnPlan], wanted: str | None = None) -> str:
    """`jvm` or `spark` (see the module docstring) for a scan of these columns."""
    method = (wanted or os.environ.get("STATLAS_SCAN") or "auto").strip().lower()
    if method not in METHODS:
        raise StatlasError(f"STATLAS_SCAN is one of {', '.join(METHODS)}, got {method!r}")
    available = _loaded(session)
    if any(p.iceberg for p in plans) and (method == "spark" or not available):
        raise ScanUnavailable(
            "an Iceberg table is collected by the one-pass scan (its Iceberg sketches): "
            + ("unset STATLAS_SCAN=spark" if method == "spark" else "build it with `make install`")
        )
    if method == "spark":
        return "spark"
    if method == "jvm" and not available:
        raise ScanUnavailable(
            "the one-pass collection scan is not on this Spark session's classpath "
            "(build it with `make install`, or set STATLAS_SCAN=spark)"
        )
    if method == "jvm" and not supports(plans):
        kinds = sorted({p.type for p in plans if not supports([p])})
        raise ScanUnavailable(f"the one-pass collection scan cannot describe {', '.join(kinds)}")
    return "jvm" if available and supports(plans) else "spark"


def _loaded(session: Any) -> bool:
    from py4j.java_gateway import JavaClass  # type: ignore[import-untyped]

    try:
        return isinstance(session._jvm.statlas.collect.PartitionScan, JavaClass)
    except Exception:  # a remote (Connect) session has no JVM here
        return False


def scan(
    frame: Any,
    keys: list[str],
    plans: list[ColumnPlan],
    sample_rate: float,
    seed: int,
    partitions: int,
    theta_lg_k: int = THETA_LG_K,
    kll_k: int = KLL_K,
    forced: Sequence[ForcedKeys] = (),
    theta_least: int | None = None,
) -> Any:
    """The one-pass scan of `frame` grouped by `keys`: a DataFrame shaped like the
    aggregation of collectors.aggregations.aggregate_expressions. The JVM projects the
    frame as collectors.aggregations.project does (each column, or struct leaf, under its
    alias) and scans it; each partition's Theta sketches are of `theta_lg_k` (of integral
    columns, down to `theta_least` where their values are sparse), its KLL ones of `kll_k`;
    a row of a `forced` key is sampled whatever the draw (collectors.forced_keys).
    The arguments cross to the JVM in one call (`packed`)."""
    from pyspark.sql import DataFrame

    session = frame.sparkSession
    kept = sampled(plans) if sample_rate > 0 else []
    keyed = forced_columns(plans, forced)
    jdf = session._jvm.statlas.collect.PartitionScan.scanPacked(
        frame._jdf,
        packed(keys),
        packed([quoted(p.source) for p in plans]),
        packed([p.alias for p in plans]),
        packed([spec(p, theta_lg_k, kll_k, theta_least) for p in plans]),
        packed([str(i) for i, p in enumerate(plans) if p in kept]),
        float(sample_rate),
        int(seed),
        int(partitions),
        packed([str(index) for index, _ in keyed]),
        packed([packed([str(v) for v in values]) for _, values in keyed]),
    )
    return DataFrame(jdf, session)


def reads_batches(frame: Any, keys: list[str], plans: list[ColumnPlan]) -> bool:
    """Whether `scan` of these columns reads the frame's columnar batches (Parquet's, ORC's
    vectorised readers: each run of a column's values described once per distinct value)
    rather than Spark's rows of them; spark.statlas.scan.columnar=false asks for rows."""
    return bool(
        frame.sparkSession._jvm.statlas.collect.PartitionScan.readsBatches(
            frame._jdf,
            packed(keys),
            packed([quoted(p.source) for p in plans]),
            packed([p.alias for p in plans]),
        )
    )


if __name__ == "__main__":  # `python -m collectors.jvm_scan`: build the jar (make install)
    built = scan_jar()
    if built is None:
        raise SystemExit("no javac found (a JDK 17): the collection scan's jar was not built")
    os.utime(built)  # newer than the venv it was checked against (the Makefile's rule)
    print(f"the collection scan's jar: {built}")
