"""Ref ids, timestamps, records and the ref file header of the ref store.

An id is `r<UTC yyyymmddThhmmssmmm>-<operation slug>-<10 hex>`: sortable by
time, readable, unique across processes (40 random bits per millisecond), and
safe as a file name on every platform (ASCII letters, digits, `-` and `_`; no
reserved Windows name). The pattern and the date are checked before any path
is built from an id.

A ref file is its record's header line followed by the stored bytes. The
header is the truth about the ref (tenant, expiry, size, sha256); the index
line repeats it. The header carries a seal, the sha256 of its own fields, so
a changed byte anywhere in the file reads as `ref_corrupt`, never as another
tenant, another expiry or another size.
"""

from __future__ import annotations

import functools
import json
import os
import re
import time
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any, NamedTuple

Clock = Callable[[], int]  # epoch milliseconds

REF_ID = re.compile(r"r([0-9]{8})T([0-9]{9})-([a-z0-9_]{1,24})-([0-9a-f]{10})\Z", re.ASCII)
HEADER_MAGIC = "qdslRef"
HEADER_VERSION = 1
# A header holds a record (a tenant id is short); anything longer is not one.
MAX_HEADER_BYTES = 64 * 1024


def system_clock() -> int:
    return time.time_ns() // 1_000_000


def iso_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


_EPOCH_DAY = date(1970, 1, 1).toordinal()


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
    # calendar.timegm's arithmetic (the day of the month is not checked), without
    # loading `calendar` and `locale`
    first = date(int(day[:4]), int(day[5:7]), 1).toordinal()
    return (first - _EPOCH_DAY + int(day[8:10]) - 1) * 86_400_000


def new_ref_id(operation: str, now_ms: int) -> str:
    stamp = datetime.fromtimestamp(now_ms / 1000, UTC)
    slug = re.sub(r"[^a-z0-9]+", "_", operation.lower()).strip("_")[:24] or "op"
    ms = now_ms % 1000
    return f"r{stamp:%Y%m%dT%H%M%S}{ms:03d}-{slug}-{os.urandom(5).hex()}"


def ref_id_time_ms(ref_id: str) -> int | None:
    """The creation time an id names; None for anything that is not a ref id."""
    m = REF_ID.match(ref_id)
    if m is None:
        return None
    day, clock = m.group(1), m.group(2)
    try:  # the pattern admits month 13 and Feb 30; the calendar does not
        stamp = datetime(
            int(day[:4]),
            int(day[4:6]),
            int(day[6:]),
            int(clock[:2]),
            int(clock[2:4]),
            int(clock[4:6]),
            tzinfo=UTC,
        )
    except ValueError:
        return None
    return int(stamp.timestamp()) * 1000 + int(clock[6:])


def is_ref_id(text: str) -> bool:
    return ref_id_time_ms(text) is not None


# A named tuple rather than a dataclass: `dataclasses` (with `inspect`) is the
# heaviest import a command's start-up would otherwise pay for the ref store.
class RefRecord(NamedTuple):
    ref_id: str
    operation: str
    created_ms: int
    expires_ms: int
    bytes: int
    sha256: str
    # The tenant the result was made for; None: made without one, readable by all.
    tenant: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "refId": self.ref_id,
            "operation": self.operation,
            "createdAt": iso_ms(self.created_ms),
            "expiresAt": iso_ms(self.expires_ms),
            "bytes": self.bytes,
            "sha256": self.sha256,
            "tenant": self.tenant,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> RefRecord:
        tenant = doc.get("tenant")
        if tenant is not None and not isinstance(tenant, str):
            raise TypeError("tenant")
        return cls(
            ref_id=str(doc["refId"]),
            operation=str(doc["operation"]),
            created_ms=parse_iso_ms(str(doc["createdAt"])),
            expires_ms=parse_iso_ms(str(doc["expiresAt"])),
            bytes=int(doc["bytes"]),
            sha256=str(doc["sha256"]),
            tenant=tenant,
        )

    def readable_by(self, tenant: str | None) -> bool:
        return self.tenant is None or self.tenant == tenant

    @property
    def relpath(self) -> str:
        return relpath(self.ref_id)


def index_line(record: RefRecord) -> bytes:
    return (json.dumps(record.to_json(), separators=(",", ":")) + "\n").encode()


def encode_header(record: RefRecord) -> bytes:
    """The first line of the ref file."""
    fields = record.to_json()
    doc = {HEADER_MAGIC: HEADER_VERSION, **fields, "seal": _seal(fields)}
    return (json.dumps(doc, separators=(",", ":")) + "\n").encode()


def decode_header(data: bytes) -> tuple[RefRecord, int]:
    """The record of a ref file and where its stored bytes start.

    ValueError for anything but an intact header of a well-formed record.
    """
    end = data.find(b"\n", 0, MAX_HEADER_BYTES)
    if end < 0:
        raise ValueError("no header line")
    try:
        doc = json.loads(data[:end])
        if not isinstance(doc, dict) or doc.pop(HEADER_MAGIC, None) != HEADER_VERSION:
            raise ValueError("not a ref header")
        seal = doc.pop("seal", None)
        record = RefRecord.from_json(doc)
    except (KeyError, TypeError, OverflowError, RecursionError) as exc:
        raise ValueError(f"bad header: {type(exc).__name__}") from None
    # The seal covers the header exactly as written: fields that merely parse to
    # the same record ("2026l11-18T11{06:40", "5" for 5) are a changed file.
    written = _seal(doc)
    if seal != written or written != _seal(record.to_json()):
        raise ValueError("the header does not match its seal")
    if not is_ref_id(record.ref_id):
        raise ValueError("bad ref id in header")
    return record, end + 1


def day_of(ref_id: str) -> str:
    day = ref_id[1:9]
    return f"{day[:4]}-{day[4:6]}-{day[6:]}"


def relpath(ref_id: str) -> str:
    """`<YYYY-MM-DD>/<refId>.json`, for an id already checked by `is_ref_id`."""
    return f"{day_of(ref_id)}/{ref_id}.json"


def _seal(fields: dict[str, Any]) -> str:
    import hashlib  # OpenSSL: loaded only when there is a ref to seal or check

    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def record_seal(record: RefRecord) -> str:
    """The seal of a record's fields: what a ref file's header carries, and the
    PostgreSQL store's `seal` column."""
    return _seal(record.to_json())
