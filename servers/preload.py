"""The modules a daemon's requests import on first use, imported when the daemon starts
(issue 22): the first /estimate or /explain is not slower by their loading, and the memory
they take (~13 MB: Arrow's dataset and Acero, sqlglot's qualifier and Spark dialect) is
part of the daemon's start, not growth while it serves (which should follow its cache,
STATLAS_CACHE_MB)."""

from __future__ import annotations

import importlib

# what a query's estimate and plan import lazily, directly or inside the libraries they call
REQUEST_MODULES = (
    "optimizer.estimate.api",
    "optimizer.physical.api",
    "metastore.partitions.where",  # partition predicates evaluated by the metastore
    "sqlglot.optimizer.qualify",  # sql_to_plan qualifies every statement
    "sqlglot.dialects.spark",  # the default dialect of requests
    "pyarrow.acero",  # Arrow's group_by and join on a sample's columns
    "pyarrow.dataset",  # imported by Acero on first use
    "dateutil.relativedelta",  # imported with Arrow's dataset filesystems
    "numpy.ma",  # masked arrays of the sketch roll-ups
    "numpy.char",  # string histograms
)


def import_request_modules() -> None:
    """Import `REQUEST_MODULES` (once; later imports are dictionary lookups)."""
    for name in REQUEST_MODULES:
        importlib.import_module(name)
