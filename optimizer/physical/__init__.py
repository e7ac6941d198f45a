"""The physical plan: join order, join algorithms, shuffles and jobs, and their costs."""
