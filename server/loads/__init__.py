"""The load entry points the server answers (Stream Load, LOAD LABEL, EXPORT, SELECT ... INTO OUTFILE) and the load
jobs SHOW LOAD lists; the pipeline they feed is planner.loads."""
