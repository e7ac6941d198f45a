"""The seed's cost model: variables (params), per-operator CPU and IO (formulas)."""
