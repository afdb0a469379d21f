"""Bearer tokens for `qdsl mcp --http`: each maps to one tenant.

The tokens file `<state dir>/mcp/tokens.jsonl` (directory 0700, file 0600)
holds no token, only its sha256: a token is 256 random bits, so its hash
cannot be reversed and needs no salt. The file is a log of one-line events
(`add`, `revoke`), each appended in one write, so two `qdsl mcp token`
commands never lose each other's lines and a running server sees a revocation
on its next request (the file is read again whenever it changes).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from qdsl.dsl.errors import UsageError
from qdsl.dsl.tenant import valid_tenant

TOKEN_PREFIX = "qdsl_"
_FILE = "tokens.jsonl"


@dataclass(frozen=True)
class TokenRecord:
    token_id: str
    tenant: str
    sha256: str
    created_at: str
    revoked_at: str | None = None
    label: str | None = None

    def public(self) -> dict[str, Any]:
        """What `token list` shows: everything but the hash."""
        return {
            "id": self.token_id,
            "tenant": self.tenant,
            "label": self.label,
            "createdAt": self.created_at,
            "revokedAt": self.revoked_at,
            "active": self.revoked_at is None,
        }


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class TokenFile:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.dir = root / "mcp"
        self.path = self.dir / _FILE
        self._seen: tuple[int, int] | None = None
        self._records: dict[str, TokenRecord] = {}

    @classmethod
    def default(cls) -> TokenFile:
        from qdsl.envelope.settings import state_dir

        return cls(state_dir())

    # ------------------------------------------------------------------ write
    def add(self, tenant: str, label: str | None = None) -> tuple[str, TokenRecord]:
        """A new token for `tenant`: (the token, shown once; its record)."""
        tenant = valid_tenant(tenant)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        record = TokenRecord(
            token_id="tk_" + secrets.token_hex(6),
            tenant=tenant,
            sha256=digest(token),
            created_at=_now(),
            label=label,
        )
        self._append(
            {
                "op": "add",
                "id": record.token_id,
                "tenant": tenant,
                "sha256": record.sha256,
                "createdAt": record.created_at,
                "label": label,
            }
        )
        return token, record

    def revoke(self, token_id: str) -> TokenRecord:
        record = self.records().get(token_id)
        if record is None:
            raise UsageError(
                "unknown_token",
                f"no token {token_id[:40]!r}",
                hint="`qdsl mcp token list` shows the token ids",
                details={"id": token_id[:40]},
            )
        if record.revoked_at is None:
            self._append({"op": "revoke", "id": token_id, "revokedAt": _now()})
        return self.records()[token_id]

    def _append(self, event: dict[str, Any]) -> None:
        from qdsl.envelope import atomic
        from qdsl.envelope.private_dir import UnsafeDirectory, ensure_child, ensure_root

        try:
            ensure_root(self.root, create=True)
            ensure_child(self.dir, "the mcp directory", create=True)
            atomic.append_line(self.path, (json.dumps(event) + "\n").encode("utf-8"))
        except (UnsafeDirectory, OSError) as exc:
            reason = str(exc) if isinstance(exc, UnsafeDirectory) else exc.strerror
            raise UsageError(
                "tokens_unwritable",
                f"cannot write the tokens file ({reason})",
                hint="check the state dir (QDSL_STATE_DIR); it must be your own, mode 0700",
            ) from None

    # ------------------------------------------------------------------- read
    def records(self) -> dict[str, TokenRecord]:
        """Every token ever added (revoked ones too), by id; re-read when the file
        changes. A file that cannot be read whole is `usage/tokens_unreadable`,
        naming its first bad line: a revocation on that line would otherwise be
        lost, so no token of it authenticates until it is fixed."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._seen, self._records = None, {}
            return {}
        except OSError as exc:
            raise unreadable(f"cannot be read ({exc.strerror})") from None
        seen = (st.st_mtime_ns, st.st_size)
        if seen != self._seen:
            try:
                data = self.path.read_bytes()
            except OSError as exc:
                raise unreadable(f"cannot be read ({exc.strerror})") from None
            self._records = _fold(data)
            self._seen = seen
        return self._records

    def lookup(self, token: str) -> TokenRecord | None:
        """The record of `token`, revoked or not, or None if it is no token of this file."""
        if not token.startswith(TOKEN_PREFIX):
            return None
        presented = digest(token)
        found = None
        for record in self.records().values():
            # compare every entry in constant time; no early exit on a match
            if hmac.compare_digest(record.sha256, presented):
                found = record
        return found

    def tenant_of(self, token: str) -> TokenRecord | None:
        """The active token's record, or None (unknown or revoked)."""
        record = self.lookup(token)
        return record if record is not None and record.revoked_at is None else None


def unreadable(why: str, line: int | None = None) -> UsageError:
    where = f"line {line} of the tokens file" if line is not None else "the tokens file"
    return UsageError(
        "tokens_unreadable",
        f"{where} {why}; until it is fixed no token authenticates",
        hint="fix or remove that line of <state dir>/mcp/tokens.jsonl (`qdsl refs path` shows "
        "the state dir), then revoke and re-add tokens as needed (`qdsl mcp token list`)",
        retryable=False,
        details={"line": line} if line is not None else {},
    )


def _fold(data: bytes) -> dict[str, TokenRecord]:
    """The records of the file's lines, each of which must be a whole event."""
    records: dict[str, TokenRecord] = {}
    lines = data.split(b"\n")
    if lines[-1]:  # not newline-terminated: a torn write (one write per line)
        raise unreadable("is incomplete (a write was cut short)", len(lines))
    for number, raw in enumerate(lines[:-1], start=1):
        event = _event(raw, number)
        token_id = event["id"]
        if event["op"] == "add":
            records[token_id] = TokenRecord(
                token_id=token_id,
                tenant=event["tenant"],
                sha256=event["sha256"],
                created_at=event["createdAt"],
                label=event.get("label"),
            )
        elif token_id in records:
            old = records[token_id]
            records[token_id] = TokenRecord(
                old.token_id,
                old.tenant,
                old.sha256,
                old.created_at,
                event["revokedAt"],
                old.label,
            )
    return records


_REQUIRED = {"add": ("id", "tenant", "sha256", "createdAt"), "revoke": ("id", "revokedAt")}


def _event(raw: bytes, number: int) -> dict[str, Any]:
    try:
        event = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise unreadable("is not a JSON line", number) from None
    if not isinstance(event, dict) or event.get("op") not in _REQUIRED:
        raise unreadable("is no `add` or `revoke` event", number)
    for key in _REQUIRED[event["op"]]:
        if not isinstance(event.get(key), str) or not event[key]:
            raise unreadable(f"has no {key}", number)
    label = event.get("label")
    if label is not None and not isinstance(label, str):
        raise unreadable("has a label that is no text", number)
    return event
