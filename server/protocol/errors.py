"""Protocol-level failures, and turning any exception into the (code, sqlstate, message) of an ERR packet."""

from __future__ import annotations

import logging
import re
import uuid

from server.protocol.constants import ErrorCode


class ProtocolError(Exception):
    """The client broke the protocol. `fatal` errors close the connection after the ERR packet."""

    code = ErrorCode.MALFORMED_PACKET
    sqlstate = "HY000"
    fatal = False

    def __init__(self, message: str = "Malformed communication packet.") -> None:
        super().__init__(message)
        self.message = message


class MalformedPacket(ProtocolError):
    pass


class PacketTooLarge(ProtocolError):
    code = ErrorCode.NET_PACKET_TOO_LARGE
    sqlstate = "08S01"
    fatal = True

    def __init__(self) -> None:
        super().__init__("Got a packet bigger than 'max_allowed_packet' bytes")


class PacketsOutOfOrder(ProtocolError):
    code = ErrorCode.NET_PACKETS_OUT_OF_ORDER
    sqlstate = "08S01"
    fatal = True

    def __init__(self) -> None:
        super().__init__("Got packets out of order")


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


log = logging.getLogger("dorislite")


def error_fields(exc: BaseException) -> tuple[int, str, str]:
    """An exception with code/sqlstate/message keeps them; anything else is 1105 with a short text."""
    code, state, message = getattr(exc, "code", None), getattr(exc, "sqlstate", None), getattr(exc, "message", None)
    if isinstance(code, int) and isinstance(state, str) and isinstance(message, str):
        return code, state, _ANSI.sub("", message)
    # anything else is internal: its text (a Python exception, a server path) stays in the server log
    incident = uuid.uuid4().hex[:12]
    log.error("statement failed (incident %s)", incident, exc_info=exc)
    return (ErrorCode.UNKNOWN_ERROR, "HY000",
            f"errCode = 2, detailMessage = Internal error; the server log has it as incident {incident}")
