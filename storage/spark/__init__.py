"""Apache Spark integration: the Java runtime Spark needs, and (for loads) the tablet data source."""
