"""Loads: every way rows get into a table, as one pipeline.

Entry points (server/): INSERT (server/session.py), Stream Load (server/loads/stream_load.py) and LOAD LABEL
(server/loads/label_loads.py) build a `request.LoadRequest`; `pipeline.run_load` runs it in-process or on Spark.
EXPORT and SELECT ... INTO OUTFILE go the other way (server/loads/exports.py, server/loads/outfile.py).

    source    files.py (local() files, read with Arrow), spark_sources.py (tables and files as Spark views)
    convert   convert.py: values cast to the table's types with Doris's checks and reasons (Arrow, and the same
              rules as Spark SQL expressions)
    route     route.py: PARTITION (...) / TEMPORARY PARTITION / OVERWRITE targets; the engine's router places rows
    write     in_process.py (storage.engine.load) or spark_run.py (Spark tasks stage rowsets, storage/spark)
    publish   the engine's commit (or hold, for two-phase loads), all or nothing
"""
