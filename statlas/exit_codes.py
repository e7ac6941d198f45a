"""The exit code of `statlas` for each of the project's errors: that of the nearest class of
the error's MRO in EXIT_CODES (3: the metastore cannot be reached; 2: anything else)."""

from __future__ import annotations

from metastore.errors import MetastoreUnavailable, StatlasError

EXIT_CODES: dict[type[StatlasError], int] = {
    MetastoreUnavailable: 3,
    StatlasError: 2,
}


def exit_code(error: StatlasError) -> int:
    """The exit code of a command that failed with `error` (EXIT_CODES)."""
    for cls in type(error).__mro__:
        code = EXIT_CODES.get(cls)
        if code is not None:
            return code
    raise AssertionError("StatlasError is in EXIT_CODES")  # pragma: no cover
