"""Storage: the durable catalog (SQLite) and the Doris-style tablet engine.

In: catalog specs and Arrow tables whose columns already carry the table's Arrow types.
Out: catalog objects (storage.catalog.model) and Arrow tables from scans.
Imports nothing from server, planner or sql (DESIGN.md layering); Doris type names are opaque strings here.
"""
