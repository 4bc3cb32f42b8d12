"""The MySQL wire protocol endpoint: handshake, auth, framing, commands, result encoding.

Decision: the packet framing, handshake and command loop are our own asyncio code rather than a
mysql-mimic subclass. mimic's packet parser, stream and result encoder are compiled (mypyc) and
cannot be patched, and exactly those parts fail against hostile clients (a missing NUL loops forever,
no packet limit, refused logins keep the connection, prepared parameters pasted unescaped, blocking
execution). Owning ~1,000 lines gives bounds-checked parsing, limits and timeouts everywhere.
From mysql-mimic we reuse only its wire enums (Capabilities, Commands, ServerStatus, ColumnType).

Statements reach a per-connection `ConnectionHandler` (handler.py), always in a worker thread.
"""

from server.protocol.handler import ConnectionHandler, ConnectionInfo, HandlerFactory
from server.protocol.prepared import quote_string, render_literal
from server.protocol.server import MysqlServer, ProcessInfo

__all__ = [
    "ConnectionHandler", "ConnectionInfo", "HandlerFactory", "MysqlServer", "ProcessInfo",
    "quote_string", "render_literal",
]
