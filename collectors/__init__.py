"""Spark jobs that collect every statistic of every partition in one scan."""
