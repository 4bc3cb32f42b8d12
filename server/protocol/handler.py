"""The contract between the protocol layer and the SQL session that executes statements."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa

from server.results import Result

if TYPE_CHECKING:
    from server.protocol.server import MysqlServer


@dataclass
class ConnectionInfo:
    """Who is connected. `server` gives the session KILL and SHOW PROCESSLIST (both thread-safe)."""

    connection_id: int
    user: str
    host: str  # client address, as in 'user'@'host'
    database: str | None  # initial database from the handshake (CLIENT_CONNECT_WITH_DB) or COM_CHANGE_USER
    capabilities: int  # client capability flags, already masked by what the server offers
    server: MysqlServer
    client_attrs: dict[str, str] = field(default_factory=dict)
    identity: Any = None  # the account the login matched (server.access.Identity)


class ConnectionHandler(Protocol):
    """One per connection. Every method runs in a worker thread, never two at once for one connection.

    Errors: raise an exception with `code`, `sqlstate` and `message` attributes to choose the ERR packet
    (anything else is sent as 1105 HY000). An exception may also carry `results` (a list of Results of
    the statements that ran before the failing one in a multi-statement text); they are sent first.
    Optional extras the protocol layer uses when present: a `database` attribute (current database, for
    SHOW PROCESSLIST), a `cancel()` method (KILL QUERY; called from another thread) and `quick(sql)`: True when
    the statement is known to take about a millisecond (a kept plan that last ran that fast). Such a statement
    runs on the event loop's thread: handing it to a worker and its answer back cost more than running it
    (point lookups from 16 clients: 300 -> 660 per second). `quick` runs on the event loop; it must not wait.
    `short(sql)`, asked on the event loop too of a statement that is not quick: True when it usually takes a few
    milliseconds; it then waits for its turn to run in the short statements' lane (server/protocol/admission.py).
    """

    def execute(self, sql: str, multi: bool) -> list[Result]:
        """Run the text of one COM_QUERY (or a bound prepared statement, then always multi=False).

        With multi=False the handler must reject text holding more than one statement.
        """
        ...

    def init_db(self, db: str) -> None:
        """COM_INIT_DB (and the handshake's database); raise a 1049 error for an unknown database."""
        ...

    def field_list(self, table: str) -> pa.Schema:
        """COM_FIELD_LIST (the mysql CLI's tab completion): the table's columns; may raise."""
        ...

    def close(self) -> None:
        ...


# Called in a worker thread after a successful login; COM_CHANGE_USER and COM_RESET_CONNECTION close the
# connection's handler and ask the factory for a new one.
HandlerFactory = Callable[[ConnectionInfo], ConnectionHandler]
