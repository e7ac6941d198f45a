"""servers.http.formats: the examples of its docstring."""

from __future__ import annotations

import doctest


def test_formats_examples() -> None:
    """The examples in servers.http.formats's docstring (the time format, the NUL rule)."""
    from servers.http import formats

    assert doctest.testmod(formats).failed == 0
