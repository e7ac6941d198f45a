"""statlas: the application shell (CLI and settings) over the metastore."""

__version__ = "0.1.0"
