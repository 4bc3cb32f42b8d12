"""The storage side of Doris's jobs: the ALTER job state machine (alter), rollup builds (rollup), index and
column schema changes (schema_change), and DELETE's versions (delete)."""
