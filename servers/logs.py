"""The daemon's log: one line per event on stderr."""

from __future__ import annotations

import logging
import sys

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class OneLineFormatter(logging.Formatter):
    """Messages on one line (database errors span several); tracebacks stay as they are."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return " ".join(super().formatMessage(record).split())


def configure_logging() -> None:
    """One line per event on stderr: statlas's own loggers, uvicorn's, APScheduler's
    warnings (the CLI leaves the root logger silent)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineFormatter(LOG_FORMAT))
    for name, level in (
        ("statlas", logging.INFO),
        ("uvicorn", logging.INFO),
        ("uvicorn.access", logging.WARNING),
        ("apscheduler", logging.WARNING),
    ):
        logger = logging.getLogger(name)
        logger.setLevel(level)
        if name in ("statlas", "uvicorn", "apscheduler"):
            logger.addHandler(handler)
        logger.propagate = False
