"""What each statement needs, checked before it does anything (Doris's per-statement checkPriv), in one place.

Table statements name their table as (`db`, `table` or `name`); queries check SELECT on every table and view they
read while they are bound (QueryContext.check_access), so only their targets are listed here. Doris's rules:
loads, DELETE, UPDATE and TRUNCATE need LOAD_PRIV; CREATE / DROP / ALTER of a table or view CREATE_PRIV /
DROP_PRIV / ALTER_PRIV on it; databases the same on the database; SHOW of an object any privilege on it; the
configuration and the proc tree ADMIN_PRIV; accounts GRANT_PRIV (checked by server.accounts).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sql import statements as st

if TYPE_CHECKING:
    from server.session import Session

Check = Callable[["Session", Any], None]


def _table(priv: str, table_field: str = "table") -> Check:
    def check(session: Session, s: Any) -> None:
        db = session._db(getattr(s, "db", None))
        session.ctx.users.require_table(session.identity, priv, db, getattr(s, table_field))
    return check


def _database(priv: str, field: str = "name") -> Check:
    def check(session: Session, s: Any) -> None:
        session.ctx.users.require_db(session.identity, priv, getattr(s, field))
    return check


def _visible_table(table_field: str = "table") -> Check:
    """Any privilege on the table (SHOW CREATE TABLE, DESC, SHOW PARTITIONS ...)."""
    def check(session: Session, s: Any) -> None:
        db = session._db(getattr(s, "db", None))
        name = getattr(s, table_field)
        if db.lower() != "information_schema" and not session.ctx.users.has_any(session.identity, db, name):
            raise session.ctx.users.denied_table("SHOW", session.identity, db, name)
    return check


def _visible_database(field: str = "db") -> Check:
    def check(session: Session, s: Any) -> None:
        db = getattr(s, field, None) or session.database
        if db and db.lower() != "information_schema" and not session.ctx.users.has_any(session.identity, db):
            raise session.ctx.users.denied_db(session.identity, db)
    return check


def _admin(session: Session, s: Any) -> None:
    session.ctx.users.require_global(session.identity, "ADMIN_PRIV")


def _show_data(session: Session, s: st.ShowData) -> None:
    """SHOW DATA FROM t: any privilege on t; of a database: on the database; of every database: none (each row
    is a database the user can see)."""
    if s.table is not None:
        _visible_table()(session, s)
    elif s.db or session.database:
        _visible_database()(session, s)


def _create_table_like(session: Session, s: st.CreateTableLike) -> None:
    _table("CREATE_PRIV", "name")(session, s)
    source_db = session._db(s.source_db)
    if not session.ctx.users.has_any(session.identity, source_db, s.source):
        raise session.ctx.users.denied_table("SELECT", session.identity, source_db, s.source)


def _set_variables(session: Session, s: st.SetVariables) -> None:
    if any(scope.upper() == "GLOBAL" for scope, _, _ in s.assignments):
        _admin(session, s)


def _load_in_database(session: Session, s: Any) -> None:
    """CANCEL LOAD: LOAD_PRIV on the database (Doris checks the load's database)."""
    db = session._db(getattr(s, "db", None))
    if not session.ctx.users.has(session.identity, "LOAD_PRIV", db):
        raise session.ctx.users.denied_db(session.identity, db)


CHECKS: dict[type, Check] = {
    st.CancelLoad: _load_in_database,
    st.CreateDatabase: _database("CREATE_PRIV"),
    st.DropDatabase: _database("DROP_PRIV"),
    st.CreateTable: _table("CREATE_PRIV", "name"),
    st.CreateTableLike: _create_table_like,
    st.DropTable: _table("DROP_PRIV", "name"),
    st.CreateView: _table("CREATE_PRIV", "name"),
    st.AlterView: _table("ALTER_PRIV", "name"),
    st.DropView: _table("DROP_PRIV", "name"),
    st.TruncateTable: _table("LOAD_PRIV", "name"),
    st.Insert: _table("LOAD_PRIV"),
    st.Delete: _table("LOAD_PRIV"),
    st.Update: _table("LOAD_PRIV"),
    st.AddRollup: _table("ALTER_PRIV"),
    st.DropRollup: _table("ALTER_PRIV"),
    st.CancelAlterTableRollup: _table("ALTER_PRIV"),
    st.AddIndex: _table("ALTER_PRIV"),
    st.DropIndex: _table("ALTER_PRIV"),
    st.AlterTableRename: _table("ALTER_PRIV"),
    st.AddPartitions: _table("ALTER_PRIV"),
    st.ModifyDistribution: _table("ALTER_PRIV"),
    st.AlterTableComment: _table("ALTER_PRIV"),
    st.AlterColumns: _table("ALTER_PRIV"),
    st.AlterTableSetProperties: _table("ALTER_PRIV"),
    st.AddPartition: _table("ALTER_PRIV"),
    st.DropPartition: _table("ALTER_PRIV"),
    st.ReplacePartition: _table("ALTER_PRIV"),
    st.ModifyPartition: _table("ALTER_PRIV"),
    st.Describe: _visible_table("name"),
    st.ShowCreateTable: _visible_table("name"),
    st.ShowCreateView: _visible_table("name"),
    st.ShowColumns: _visible_table(),
    st.ShowIndex: _visible_table(),
    st.ShowPartitions: _visible_table(),
    st.ShowTableVersions: _visible_table(),
    st.ShowCreateDatabase: _visible_database("name"),
    st.ShowLoad: _visible_database(),
    st.ShowAlterTableRollup: _visible_database(),
    st.ShowDelete: _visible_database(),
    st.ShowTablets: _admin,
    st.ShowConfig: _admin,
    st.AdminSetConfig: _admin,
    st.AdminShowRollupAdvice: _admin,
    st.ShowProc: _admin,
    st.ShowNodes: _admin,
    st.ExportTable: _table("SELECT_PRIV"),
    st.CreateResource: _admin,
    st.DropResource: _admin,
    st.ShowExport: _visible_database(),
    st.CancelExport: _visible_database(),
    st.ShowData: _show_data,
    st.SetVariables: _set_variables,
}


def check_statement(session: Session, statement: st.Statement) -> None:
    check = CHECKS.get(type(statement))
    if check is not None:
        check(session, statement)
