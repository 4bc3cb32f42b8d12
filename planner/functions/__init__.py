"""Scalar SQL functions over Arrow values, one module per family (casts, strings, temporal, math).

Each module registers handlers into `planner.expressions` by sqlglot node class or by function name."""
