"""Results that `qdsl verify` can trust: an HMAC over what `qdsl run` printed.

`qdsl run` adds `mac` to its execution result: HMAC-SHA256, keyed by a secret
in the private state dir, over the caller's tenant and the result as printed
(its plan hash, rows, counts and evidence). `qdsl verify --result` recomputes
it for its own `--tenant` and refuses a result whose MAC is missing or wrong:
a result edited, made up, or made for another tenant (a t1 result relabelled
as t2) never reaches the checks. Without `--result`, verify executes the plan
itself.

The key is 32 random bytes in `<state dir>/result-mac.key` (`qdsl.dsl.settings.state_key`:
created 0600, opened without following a symlink; a key file that is a
symlink, not a regular file, not the user's, or readable by others is
refused, never used).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

from qdsl.dsl.errors import PolicyError, UsageError
from qdsl.dsl.settings.state_key import UnsafeKey, key_at

KEY_FILE = "result-mac.key"


def _unsafe(reason: str) -> UsageError:
    return UsageError(
        "unsafe_state_key",
        f"the result key in the qdsl state dir is unsafe ({reason}); it is not used",
        hint="remove result-mac.key from the state dir (`qdsl refs path`); "
        "qdsl creates a new one (results signed with the old key no longer verify)",
        retryable=False,
    )


def result_key(root: Path | None = None) -> bytes:
    """The state dir's result key, created on first use."""
    try:
        if root is None:
            from qdsl.dsl.settings.private_dir import private_root

            root = private_root()  # the user's own (typed error otherwise), made private
        else:
            root.mkdir(mode=0o700, parents=True, exist_ok=True)
        return key_at(root / KEY_FILE)
    except UnsafeKey as exc:
        raise _unsafe(str(exc)) from None
    except OSError as exc:
        raise UsageError(
            "state_dir_unusable",
            f"cannot keep the result key in the qdsl state dir ({exc.strerror})",
            hint="set QDSL_STATE_DIR to a private, writable directory",
        ) from None


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
