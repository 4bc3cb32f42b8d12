"""Binding against the catalog, logical plans, rewrites, rollup selection, predicate pushdown into storage,
the physical plan executed with pyarrow (compute + Acero), EXPLAIN text. Imports sql and storage."""
