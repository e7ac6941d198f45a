"""What several `statlas` commands share: Spark's options and JSON output."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from metastore.errors import InvalidValue


def add_spark_options(parser: argparse.ArgumentParser) -> None:
    """Where Spark runs and how it is configured (`collect`, `table register --spark-table`)."""
    parser.add_argument(
        "--master",
        metavar="URL",
        help="Spark master (default: $STATLAS_SPARK_MASTER, else local[*])",
    )
    parser.add_argument(
        "--spark-conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting (repeatable), e.g. spark.sql.catalogImplementation=hive",
    )


def spark_conf(args: argparse.Namespace) -> dict[str, str]:
    return dict(key_value_pair(p, "--spark-conf") for p in args.spark_conf)


def key_value_pair(text: str, option: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise InvalidValue(f"{option} wants KEY=VALUE, got {text!r}")
    return key.strip(), value


def print_json(value: Any) -> None:
    json.dump(value, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
