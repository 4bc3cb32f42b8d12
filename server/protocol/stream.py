"""Packet framing over an asyncio stream: 3-byte length + sequence id, 16 MiB continuation, size limit."""

from __future__ import annotations

import asyncio
import time

from server.protocol.constants import MAX_PAYLOAD
from server.protocol.errors import PacketsOutOfOrder, PacketTooLarge


class PacketStream:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 max_packet: int, read_timeout: float, write_timeout: float = 600.0) -> None:
        self.reader = reader
        self.writer = writer
        self.max_packet = max_packet
        self.read_timeout = read_timeout  # for the rest of a packet once its header arrived
        self.write_timeout = write_timeout  # a client that stops reading our answers is dropped
        self.seq = 0
        self._out: list[bytes | memoryview] = []  # packets written since the last flush: one send for all

    async def read(self, new_command: bool = False) -> bytes:
        """One logical packet. `new_command` resets the sequence: a command always starts at 0."""
        if new_command:
            self.seq = 0
        length = await self._header(wait=None)
        total = length
        if total > self.max_packet:
            raise PacketTooLarge()
        parts = [await self._body(length)]
        while length == MAX_PAYLOAD:
            length = await self._header(wait=self.read_timeout)
            total += length
            if total > self.max_packet:
                raise PacketTooLarge()
            parts.append(await self._body(length))
        return parts[0] if len(parts) == 1 else b"".join(parts)

    async def _header(self, wait: float | None) -> int:
        if wait:
            async with asyncio.timeout(wait):  # (wait_for would run the read as a task of its own)
                header = await self.reader.readexactly(4)
        else:
            header = await self.reader.readexactly(4)
        if header[3] != self.seq:
            raise PacketsOutOfOrder()
        self.seq = (self.seq + 1) & 0xFF
        return int.from_bytes(header[:3], "little")

    async def _body(self, length: int) -> bytes:
        if not length:
            return b""
        if len(self.reader._buffer) >= length:  # arrived with its header (nearly always): nothing to time
            return await self.reader.readexactly(length)
        # a timeout scope, not wait_for: that runs the read as a task of its own, ~20 us of every statement
        async with asyncio.timeout(self.read_timeout):
            return await self.reader.readexactly(length)

    def write(self, payload: bytes) -> None:
        """Frame one logical packet, splitting at 16 MiB - 1 (an exact multiple ends with an empty packet)."""
        view = memoryview(payload)
        while True:
            chunk = view[:MAX_PAYLOAD]
            self._out.append(len(chunk).to_bytes(3, "little") + bytes((self.seq,)))
            if len(chunk):
                self._out.append(chunk)
            self.seq = (self.seq + 1) & 0xFF
            view = view[MAX_PAYLOAD:]
            if len(chunk) < MAX_PAYLOAD:
                return

    def write_framed(self, data: bytes, packets: int) -> None:
        """Bytes that already hold `packets` framed packets numbered from the current sequence id."""
        self._out.append(data)
        self.seq = (self.seq + packets) & 0xFF

    async def flush(self) -> None:
        if self._out:
            out, self._out = self._out, []
            self.writer.write(out[0] if len(out) == 1 else b"".join(out))
        transport = self.writer.transport
        if transport.get_write_buffer_size() == 0 and not transport.is_closing():
            return  # all sent: no need for a timed wait (a task and a timer per statement)
        await asyncio.wait_for(self.writer.drain(), self.write_timeout)

    async def discard_input(self, budget: float = 3.0, idle: float = 0.3) -> None:
        """Swallow what the client is still sending, so it can read our ERR before we close.

        Stops at EOF, after `idle` seconds without data, or after `budget` seconds in all.
        """
        deadline = time.monotonic() + budget
        while (left := deadline - time.monotonic()) > 0:
            try:
                chunk = await asyncio.wait_for(self.reader.read(1 << 20), min(idle, left))
            except (TimeoutError, OSError):
                return
            if not chunk:
                return
