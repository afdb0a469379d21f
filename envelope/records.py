"""Ref ids, timestamps and index records of the ref store.

An id is `r<UTC yyyymmddThhmmssmmm>-<operation slug>-<10 hex>`: sortable by
time, readable, unique across processes (40 random bits per millisecond), and
safe as a file name (the pattern is checked before any path is built from it).
"""

from __future__ import annotations

import calendar
import functools
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

Clock = Callable[[], int]  # epoch milliseconds

REF_ID = re.compile(r"r(\d{8})T(\d{9})-([a-z0-9_]{1,24})-([0-9a-f]{10})\Z")


def system_clock() -> int:
    return time.time_ns() // 1_000_000


def iso_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def parse_iso_ms(text: str) -> int:
    if len(text) == 24 and text[10] == "T" and text[19] == "." and text[23] == "Z":
        # Our own format: the index holds thousands of these, parse them cheaply.
        return (
            _day_ms(text[:10])
            + int(text[11:13]) * 3_600_000
            + int(text[14:16]) * 60_000
            + int(text[17:19]) * 1000
            + int(text[20:23])
        )
    return round(datetime.fromisoformat(text).timestamp() * 1000)


@functools.lru_cache(maxsize=512)
def _day_ms(day: str) -> int:
    return calendar.timegm((int(day[:4]), int(day[5:7]), int(day[8:10]), 0, 0, 0, 0, 0, 0)) * 1000


def new_ref_id(operation: str, now_ms: int) -> str:
    stamp = datetime.fromtimestamp(now_ms / 1000, UTC)
    slug = re.sub(r"[^a-z0-9]+", "_", operation.lower()).strip("_")[:24] or "op"
    ms = now_ms % 1000
    return f"r{stamp:%Y%m%dT%H%M%S}{ms:03d}-{slug}-{secrets.token_hex(5)}"


def ref_id_time_ms(ref_id: str) -> int | None:
    m = REF_ID.match(ref_id)
    if m is None:
        return None
    day, clock = m.group(1), m.group(2)
    stamp = datetime.strptime(day + clock[:6], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    return int(stamp.timestamp()) * 1000 + int(clock[6:])


@dataclass(frozen=True)
class RefRecord:
    ref_id: str
    operation: str
    created_ms: int
    expires_ms: int
    bytes: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {
            "refId": self.ref_id,
            "operation": self.operation,
            "createdAt": iso_ms(self.created_ms),
            "expiresAt": iso_ms(self.expires_ms),
            "bytes": self.bytes,
            "sha256": self.sha256,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> RefRecord:
        return cls(
            ref_id=str(doc["refId"]),
            operation=str(doc["operation"]),
            created_ms=parse_iso_ms(str(doc["createdAt"])),
            expires_ms=parse_iso_ms(str(doc["expiresAt"])),
            bytes=int(doc["bytes"]),
            sha256=str(doc["sha256"]),
        )

    @property
    def relpath(self) -> str:
        day = self.ref_id[1:9]
        return f"{day[:4]}-{day[4:6]}-{day[6:]}/{self.ref_id}.json"
