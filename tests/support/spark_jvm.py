"""The JVM options of every Spark driver a test run starts (SPARK_SUBMIT_OPTS, which
spark-submit puts on the driver JVM of this process and of every CLI a test runs).

A test's driver lives seconds to minutes, and most of its start is loading Spark's classes:
- the client compiler alone and the serial collector start and run it faster (a CLI
  collection of the demo table 30 -> 23 s; test_collect.py with test_cli_spark.py
  168 -> 123 s, measured);
- a class-data archive of the classes a driver loads (the JDK's dynamic CDS archive, made
  once per JDK and pyspark by a small Spark job) maps them instead of loading them: a
  driver's start and first job 6.7 -> 3.6 s (measured). A JVM whose class path does not
  match the archive's ignores it, silently.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

BASE_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
ARCHIVE_TIMEOUT = 300  # seconds the archiving job may take

# what the archiving driver does: start, read and write Parquet, join, aggregate, stop
_ARCHIVING_JOB = """
import sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.master("local[1]").getOrCreate()
rows = spark.range(2000).selectExpr("id", "id % 7 AS k", "cast(id AS string) AS s")
rows.write.parquet(sys.argv[1])
frame = spark.read.parquet(sys.argv[1])
frame.join(frame.groupBy("k").count(), "k").groupBy("s").agg({"id": "max"}).collect()
spark.stop()
"""


def driver_options(directory: Path) -> tuple[str, subprocess.Popen[bytes] | None]:
    """BASE_OPTIONS with the class-data archive kept in `directory`, and where it is not
    there yet, the process making it meanwhile (drivers started before it is in place start
    without it). BASE_OPTIONS alone where no archive can be made."""
    archive = archive_path(directory)
    if archive is None:
        return BASE_OPTIONS, None
    options = f"{BASE_OPTIONS} -XX:SharedArchiveFile={archive}"
    if archive.exists():
        return options, None
    making = subprocess.Popen(
        [sys.executable, "-m", "tests.support.spark_jvm", str(directory)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=Path(__file__).resolve().parents[2],
    )
    return options, making


def archive_path(directory: Path) -> Path | None:
    """Where the archive for this JDK and pyspark is kept in `directory`; None without a
    JDK or pyspark."""
    key = _archive_key()
    return None if key is None else directory / f"spark-driver-{key}.jsa"


def class_archive(directory: Path) -> Path | None:
    """The archive of a Spark driver's classes for this JDK and pyspark, made by one small
    Spark job if it is not there yet; None where none could be made (no JDK, no pyspark, a
    failed job: drivers then start as they would without one)."""
    archive = archive_path(directory)
    if archive is None or archive.exists():
        return archive
    directory.mkdir(parents=True, exist_ok=True)
    staged = directory / f"staged-{os.getpid()}.jsa"
    output = directory / f"job-{os.getpid()}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    env["SPARK_SUBMIT_OPTS"] = f"{BASE_OPTIONS} -XX:ArchiveClassesAtExit={staged}"
    try:
        subprocess.run(
            [sys.executable, "-c", _ARCHIVING_JOB, str(output)],
            env=env,
            capture_output=True,
            timeout=ARCHIVE_TIMEOUT,
            check=True,
        )
        if not staged.exists():
            return None
        os.replace(staged, archive)  # whole or not at all: another run may read it
    except (OSError, subprocess.SubprocessError):
        return None
    finally:
        staged.unlink(missing_ok=True)
        shutil.rmtree(output, ignore_errors=True)
    return archive


def _archive_key() -> str | None:
    """What an archive is valid for: the JDK (its binary), pyspark's version and jars, and
    the options the archiving JVM ran with."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    try:
        import pyspark
    except ImportError:
        return None
    if java is None or not Path(java).exists():
        return None
    jars = Path(pyspark.__file__).parent / "jars"
    real = Path(java).resolve()
    seen = [str(real), str(real.stat().st_mtime_ns), pyspark.__version__, BASE_OPTIONS]
    seen += sorted(p.name for p in jars.glob("*.jar")) if jars.is_dir() else []
    return hashlib.sha256("\n".join(seen).encode()).hexdigest()[:16]


if __name__ == "__main__":  # python -m tests.support.spark_jvm DIRECTORY: make the archive
    class_archive(Path(sys.argv[1]))
