"""Results that `qdsl verify` can trust: an HMAC over what `qdsl run` printed.

`qdsl run` adds `mac` to its execution result: HMAC-SHA256, keyed by a secret
in the private state dir, over the caller's tenant and the result as printed
(its plan hash, rows, counts and evidence). `qdsl verify --result` recomputes
it for its own `--tenant` and refuses a result whose MAC is missing or wrong:
a result edited, made up, or made for another tenant (a t1 result relabelled
as t2) never reaches the checks. Without `--result`, verify executes the plan
itself.

The key is 32 random bytes in `<state dir>/result-mac.key`, created 0600 with
O_EXCL (linked into place whole, so a concurrent first use reads a complete
key) and opened with O_NOFOLLOW; a key file that is a symlink, not a regular
file, not the user's, or readable by others is refused, never used.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import stat
from pathlib import Path
from typing import Any

from qdsl.dsl.errors import PolicyError, UsageError

KEY_FILE = "result-mac.key"
KEY_BYTES = 32
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _unsafe(reason: str) -> UsageError:
    return UsageError(
        "unsafe_state_key",
        f"the result key in the qdsl state dir is unsafe ({reason}); it is not used",
        hint="remove result-mac.key from the state dir (`qdsl refs path`); "
        "qdsl creates a new one (results signed with the old key no longer verify)",
        retryable=False,
    )


def _read_key(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _unsafe(exc.strerror or "cannot open it") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise _unsafe("not a regular file")
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            raise _unsafe("owned by another user")
        if info.st_mode & 0o077:
            raise _unsafe("readable or writable by others")
        key = handle.read(KEY_BYTES + 1)
    if len(key) != KEY_BYTES:
        raise _unsafe("wrong length")
    return key


def _create_key(path: Path) -> None:
    temp = path.with_name(f".{KEY_FILE}.{secrets.token_hex(8)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(KEY_BYTES))
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):  # another process's key came first
            os.link(temp, path)
    finally:
        temp.unlink(missing_ok=True)


def result_key(root: Path | None = None) -> bytes:
    """The state dir's result key, created on first use."""
    if root is None:
        from qdsl.envelope.settings import state_dir

        root = state_dir()
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = root / KEY_FILE
        key = _read_key(path)
        if key is None:
            _create_key(path)
            key = _read_key(path)
    except OSError as exc:
        raise UsageError(
            "state_dir_unusable",
            f"cannot keep the result key in the qdsl state dir ({exc.strerror})",
            hint="set QDSL_STATE_DIR to a private, writable directory",
        ) from None
    if key is None:
        raise _unsafe("vanished while created")
    return key


def _message(tenant_id: str, result: dict[str, Any]) -> bytes:
    body = {k: v for k, v in result.items() if k != "mac"}
    text = json.dumps(
        {"tenant": tenant_id, "result": body},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
        allow_nan=False,
    )
    return text.encode("ascii")


def sign_result(tenant_id: str, result: dict[str, Any], key: bytes | None = None) -> str:
    """The MAC of a result as printed (its JSON form) for `tenant_id`."""
    digest = hmac.new(key or result_key(), _message(tenant_id, result), hashlib.sha256)
    return "hmac-sha256:" + digest.hexdigest()


def check_result(tenant_id: str, result: Any, key: bytes | None = None) -> None:
    """Refuse (policy/untrusted_result) a result whose MAC is missing or wrong."""
    mac = result.get("mac") if isinstance(result, dict) else None
    if not isinstance(mac, str):
        raise _untrusted("it carries no MAC")
    try:
        wanted = sign_result(tenant_id, result, key)
    except ValueError:  # NaN or the like: nothing qdsl run prints
        raise _untrusted("it is not what qdsl run prints") from None
    if not hmac.compare_digest(mac, wanted):
        raise _untrusted("its MAC does not match (edited, made elsewhere, or another tenant's)")


def _untrusted(reason: str) -> PolicyError:
    return PolicyError(
        "untrusted_result",
        f"--result is not trusted: {reason}",
        hint="pass the result exactly as `qdsl run` printed it for this --tenant "
        "(same state dir), or leave out --result to execute the plan again",
        retryable=False,
    )
