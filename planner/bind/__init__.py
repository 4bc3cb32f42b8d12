"""Binding: typed statements from `sql.statements` checked against Doris's rules and turned into storage
model objects (TableSpec ...) or bound plans. Imports sql and storage; never server."""
