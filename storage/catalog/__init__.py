"""The catalog: databases, tables, partitions, materialized indexes, tablets, rowsets, transactions.

`model` holds the immutable objects (Doris's names), `store` persists them in SQLite under the storage root.
"""
