"""Where the state lives and the `[io]` settings (docs/envelopes.md).

Each setting is read from its environment variable, then from `[io]` in
`<state dir>/config.toml`, then its default. The state directory is the
platform's user state dir (platformdirs knows the XDG / macOS / Windows
conventions, so we do not re-derive them); `QDSL_STATE_DIR` overrides it.
platformdirs and tomllib are imported only when needed: start-up time is paid
on every agent step.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, NamedTuple

from qdsl.dsl.errors import UsageError
from qdsl.dsl.settings.config import config_table, state_root

FileInputPolicy = Literal["allow", "warn", "deny"]
FILE_INPUT_POLICIES: tuple[FileInputPolicy, ...] = ("allow", "warn", "deny")
RefBackendName = Literal["file", "postgresql"]
REF_BACKENDS: tuple[RefBackendName, ...] = ("file", "postgresql")

DEFAULT_THRESHOLD = 24576
# Below this a preview cannot carry even the ref fields, so smaller thresholds
# are raised to it (0 still means "never persist").
MIN_THRESHOLD = 1024
DEFAULT_TTL_MS = 30 * 60 * 1000
DEFAULT_MAX_COUNT = 50
DEFAULT_MAX_BYTES = 200 * 1024 * 1024
# A ref younger than this is never evicted by the caps (another writer's
# collection), so a printed refId is still there when its caller reads it.
DEFAULT_GRACE_MS = 5 * 60 * 1000


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    """The qdsl state root; not created here."""
    return state_root(env)


def load_io_config(root: Path) -> dict[str, Any]:
    """The `[io]` table of `<root>/config.toml`, or {} when there is none."""
    return config_table(root, "io")


class IoSettings(NamedTuple):
    threshold: int = DEFAULT_THRESHOLD
    ttl_ms: int = DEFAULT_TTL_MS
    max_count: int = DEFAULT_MAX_COUNT
    max_bytes: int = DEFAULT_MAX_BYTES
    grace_ms: int = DEFAULT_GRACE_MS
    # Each tenant's caps (the refs made without a tenant count as one tenant);
    # by default the store's, and never above them.
    tenant_max_count: int = DEFAULT_MAX_COUNT
    tenant_max_bytes: int = DEFAULT_MAX_BYTES
    file_input: FileInputPolicy = "warn"
    # Where file_input came from, for the deny hint: "env", "config" or "default".
    file_input_source: str = "default"
    ref_store: RefBackendName = "file"
    # The PostgreSQL ref store's database; None: the deployment's (--db).
    ref_store_url: str | None = None


def _int_setting(
    env: Mapping[str, str], config: Mapping[str, Any], env_name: str, key: str, default: int
) -> int:
    raw: Any
    if env.get(env_name, "").strip():
        raw, where = env[env_name].strip(), env_name
    elif key in config:
        raw, where = config[key], f"[io] {key}"
    else:
        return default
    try:
        value = int(raw)
        if isinstance(raw, bool):
            raise ValueError
    except (TypeError, ValueError):
        raise UsageError(
            "bad_setting",
            f"{where} must be a non-negative integer, got {raw!r}",
            hint=f"set {where} to a number such as {default}",
        ) from None
    if value < 0:
        raise UsageError(
            "bad_setting", f"{where} must not be negative", hint=f"for example {default}"
        )
    return value


def parse_policy(raw: object, where: str) -> FileInputPolicy:
    text = str(raw).strip().lower()
    for policy in FILE_INPUT_POLICIES:
        if text == policy:
            return policy
    raise UsageError(
        "bad_setting",
        f"{where} must be allow, warn or deny, got {raw!r}",
        hint=f"set {where} to one of allow|warn|deny",
    )


def _ref_backend(env: Mapping[str, str], config: Mapping[str, Any]) -> RefBackendName:
    if env.get("QDSL_REF_STORE", "").strip():
        raw, where = env["QDSL_REF_STORE"], "QDSL_REF_STORE"
    elif "ref_store" in config:
        raw, where = config["ref_store"], "[io] ref_store"
    else:
        return "file"
    text = str(raw).strip().lower()
    for backend in REF_BACKENDS:
        if text == backend:
            return backend
    raise UsageError(
        "bad_setting",
        f"{where} must be file or postgresql, got {raw!r}",
        hint=f"set {where} to file (the default) or postgresql",
    )


def _ref_store_url(env: Mapping[str, str], config: Mapping[str, Any]) -> str | None:
    if env.get("QDSL_REF_STORE_URL", "").strip():
        return env["QDSL_REF_STORE_URL"].strip()
    raw = config.get("ref_store_url")
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if not isinstance(raw, str):
        raise UsageError(
            "bad_setting",
            f"[io] ref_store_url must be a database URL, got {raw!r}",
            hint='for example ref_store_url = "postgresql://qdsl@db.internal/app"',
        )
    return raw.strip()


def io_settings(env: Mapping[str, str] | None = None, root: Path | None = None) -> IoSettings:
    env = os.environ if env is None else env
    config = load_io_config(root if root is not None else state_dir(env))
    threshold = _int_setting(env, config, "QDSL_REF_THRESHOLD", "result_threshold", 24576)
    if 0 < threshold < MIN_THRESHOLD:
        threshold = MIN_THRESHOLD
    if env.get("QDSL_FILE_INPUT", "").strip():
        policy, source = parse_policy(env["QDSL_FILE_INPUT"], "QDSL_FILE_INPUT"), "env"
    elif "file_input" in config:
        policy, source = parse_policy(config["file_input"], "[io] file_input"), "config"
    else:
        policy, source = "warn", "default"
    max_count = _int_setting(env, config, "QDSL_REF_MAX_COUNT", "ref_max_count", 50)
    max_bytes = _int_setting(env, config, "QDSL_REF_MAX_BYTES", "ref_max_bytes", DEFAULT_MAX_BYTES)
    tenant_count = _int_setting(
        env, config, "QDSL_REF_TENANT_MAX_COUNT", "ref_tenant_max_count", max_count
    )
    tenant_bytes = _int_setting(
        env, config, "QDSL_REF_TENANT_MAX_BYTES", "ref_tenant_max_bytes", max_bytes
    )
    return IoSettings(
        threshold=threshold,
        ttl_ms=_int_setting(env, config, "QDSL_REF_TTL_MS", "ref_ttl_ms", DEFAULT_TTL_MS),
        max_count=max_count,
        max_bytes=max_bytes,
        tenant_max_count=min(tenant_count, max_count),
        tenant_max_bytes=min(tenant_bytes, max_bytes),
        grace_ms=_int_setting(env, config, "QDSL_REF_GRACE_MS", "ref_grace_ms", DEFAULT_GRACE_MS),
        file_input=policy,
        file_input_source=source,
        ref_store=_ref_backend(env, config),
        ref_store_url=_ref_store_url(env, config),
    )
