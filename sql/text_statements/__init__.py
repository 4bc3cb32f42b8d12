"""Statements sqlglot cannot read, parsed from the statement text into typed statement objects: account
statements (CREATE USER, GRANT ...), ALTER TABLE column clauses, EXPORT TABLE, LOAD LABEL and resources, and the
INTO OUTFILE tail of a query."""
