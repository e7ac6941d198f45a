"""The cost model (docs/design.md#cost-model): variables (params), operator costs (formulas)."""
