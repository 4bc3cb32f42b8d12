"""Wire constants: mysql-mimic's enums (plain IntEnum/IntFlag values) plus what the server advertises."""

from __future__ import annotations

from mysql_mimic.types import Capabilities, ColumnType, Commands, ServerStatus

__all__ = ["Capabilities", "ColumnType", "Commands", "ServerStatus", "SERVER_CAPABILITIES", "ErrorCode"]

SERVER_VERSION = "5.7.99"  # what Doris reports, so scanners don't flag MySQL CVEs
SERVER_CHARSET = 33  # utf8_general_ci
NATIVE_PASSWORD = "mysql_native_password"
MAX_PAYLOAD = 0xFFFFFF  # a payload this long continues in the next packet

C = Capabilities
# No CLIENT_DEPRECATE_EOF (MariaDB Connector/J 2.7 fails with it), no SSL, no compression,
# no session tracking, no query attributes (they would change the COM_QUERY layout).
SERVER_CAPABILITIES = (
    C.CLIENT_LONG_PASSWORD | C.CLIENT_FOUND_ROWS | C.CLIENT_LONG_FLAG | C.CLIENT_CONNECT_WITH_DB
    | C.CLIENT_NO_SCHEMA | C.CLIENT_IGNORE_SPACE | C.CLIENT_PROTOCOL_41 | C.CLIENT_INTERACTIVE
    | C.CLIENT_IGNORE_SIGPIPE | C.CLIENT_TRANSACTIONS | C.CLIENT_SECURE_CONNECTION
    | C.CLIENT_MULTI_STATEMENTS | C.CLIENT_MULTI_RESULTS | C.CLIENT_PS_MULTI_RESULTS
    | C.CLIENT_PLUGIN_AUTH | C.CLIENT_CONNECT_ATTRS | C.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
)


class ErrorCode:
    CON_COUNT_ERROR = 1040  # Too many connections
    HANDSHAKE_ERROR = 1043  # Bad handshake
    ACCESS_DENIED = 1045
    BAD_DB = 1049
    UNKNOWN_COM = 1047
    NO_SUCH_THREAD = 1094
    UNKNOWN_ERROR = 1105
    NET_PACKET_TOO_LARGE = 1153
    NET_PACKETS_OUT_OF_ORDER = 1156
    UNKNOWN_STMT_HANDLER = 1243
    WRONG_ARGUMENTS = 1210
    MALFORMED_PACKET = 1835
