"""stdin as lines, read by the event loop, with lines over the limit answered
and the next line read as usual.

The longest line taken is four times the input limit plus 1 MiB (room for an
argument over the input limits, so that it is refused with its typed error,
`usage/input_bytes_exceeded`). A longer line is dropped up to and with its
newline, and nothing after it: asyncio's `readline` discards an overlong line
together with its newline when both are already buffered (a line a few
kilobytes over the limit), so skipping "the rest of the line" after it ate the
next message whole, and the host waited forever for that answer. Here the
line is read with `readuntil`, which leaves the buffer as it was on an
overrun and says how much to drop.

An overlong line is answered with a JSON-RPC error (`-32600`, data
`usage/message_too_large`) carrying the request's id when the line's first
64 KiB hold it as a top-level member (`"id"` may come after a large `params`:
then it cannot be known, and the id is null, as JSON-RPC says), and logged.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Self

from qdsl.mcp.logs import logger

log = logger()

# How much of an overlong line is kept to find its id in.
_HEAD_BYTES = 64 * 1024
_WHITESPACE = " \t\r\n"


def max_line() -> int:
    from qdsl.dsl.settings.limits import limits

    return 4 * limits().input_bytes + 1024 * 1024


@dataclass(frozen=True)
class Overlong:
    """A line over `limit` bytes that was dropped; `request_id` if it was found."""

    limit: int
    dropped: int
    request_id: int | str | None


class PipeLines:
    """stdin as lines read by the event loop itself, not by a worker thread.

    The SDK reads stdin in a thread, and a thread blocked in read() cannot be
    cancelled: SIGTERM would wait for the host's next line. Read by the loop,
    a stop cancels the read like any other await.
    """

    def __init__(self, reader: asyncio.StreamReader, limit: int) -> None:
        self.reader, self.limit = reader, limit

    @classmethod
    async def open(cls) -> PipeLines | None:
        """Over fd 0 when it is a pipe (as hosts spawn servers); else None."""
        import os

        loop = asyncio.get_running_loop()
        limit = max_line()
        reader = asyncio.StreamReader(limit=limit)
        pipe = os.fdopen(os.dup(0), "rb", buffering=0)
        try:
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
        except (OSError, ValueError):
            pipe.close()
            return None
        return cls(reader, limit)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> str | Overlong:
        try:
            line = await self.reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:  # stdin closed: a last line without "\n"
            if not exc.partial:
                raise StopAsyncIteration from None
            line = exc.partial
        except asyncio.LimitOverrunError as exc:
            return await self._drop_overlong(exc.consumed)
        return line.decode("utf-8", errors="replace")

    async def _drop_overlong(self, consumed: int) -> Overlong:
        """Drop an overlong line through its newline (and no further)."""
        first = await self.reader.readexactly(consumed)
        dropped = len(first)
        while True:
            try:
                dropped += len(await self.reader.readuntil(b"\n"))
                break
            except asyncio.LimitOverrunError as exc:
                dropped += len(await self.reader.readexactly(exc.consumed))
            except asyncio.IncompleteReadError as exc:  # stdin closed inside the line
                dropped += len(exc.partial)
                break
        found = request_id(first[:_HEAD_BYTES].decode("utf-8", errors="replace"))
        log.warning("overlong_message", max_bytes=self.limit, bytes=dropped, answered=True)
        return Overlong(self.limit, dropped, found)


def request_id(head: str) -> int | str | None:
    """The top-level `"id"` of the JSON object `head` begins, if it is in `head`."""
    decoder = json.JSONDecoder()
    depth, i, n = 0, 0, len(head)
    key_next = False  # at depth 1, right after "{" or ","
    while i < n:
        c = head[i]
        if c == '"':
            try:
                text, end = decoder.raw_decode(head, i)
            except ValueError:
                return None  # the head ends inside this string
            if key_next and text == "id":
                colon = _skip_space(head, end)
                if head[colon : colon + 1] == ":":
                    return _id_value(decoder, head, _skip_space(head, colon + 1))
            key_next = False
            i = end
            continue
        if c in "{[":
            depth += 1
            key_next = depth == 1 and c == "{"
        elif c in "}]":
            depth -= 1
            key_next = False
        elif c == ",":
            key_next = depth == 1
        elif c not in _WHITESPACE:
            key_next = False
        i += 1
    return None


def _id_value(decoder: json.JSONDecoder, head: str, at: int) -> int | str | None:
    try:
        value, end = decoder.raw_decode(head, at)
    except ValueError:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    if isinstance(value, int) and end >= len(head):
        return None  # a number the head may have cut short
    return value


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WHITESPACE:
        i += 1
    return i
