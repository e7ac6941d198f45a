"""Estimates of every plan node: rows, row size and per-column statistics (see stats_query)."""
