"""Logical rewrite rules that need planner knowledge sqlglot lacks, one module per rule."""
