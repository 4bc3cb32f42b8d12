"""Process entry, MySQL protocol sessions, statement dispatch, SHOW commands, daemons, configuration."""
