"""No tenant, no query: the one check every entry applies to the caller's tenant.

A tenant id is a non-empty string of at most `[limits] tenant_chars`
characters, with no whitespace at either end and printable throughout
(`str.isprintable`: no control, format, surrogate, private-use or unassigned
character and no separator but the ASCII space). Such characters make two
tenants print alike, or break the logs and headers a tenant id travels in.
Anything else is a usage error, never "no tenant" and never the plan's own
tenant.
"""

from __future__ import annotations

from qdsl.dsl.errors import UsageError
from qdsl.dsl.settings.limits import Limits, limits

_HINT = "pass the caller's tenant id, e.g. --tenant t1 (printable, no surrounding spaces)"


def _bad(subtype: str, message: str) -> UsageError:
    return UsageError(subtype, message, hint=_HINT, retryable=False)


def valid_tenant(tenant_id: object, limit: Limits | None = None) -> str:
    """`tenant_id` itself if it is a well-formed tenant id, else a usage error
    (`limit`: the limits already read for this call, if any)."""
    if tenant_id is None:
        raise _bad("missing_tenant", "no tenant given: every query runs for one tenant")
    if not isinstance(tenant_id, str):
        raise _bad("bad_tenant", f"the tenant must be a string, got {type(tenant_id).__name__}")
    if not tenant_id.strip():
        raise _bad("missing_tenant", "the tenant is blank: every query runs for one tenant")
    lim = limit or limits()
    if len(tenant_id) > lim.tenant_chars:
        raise UsageError(
            "bad_tenant",
            f"the tenant id is over the limit of {lim.tenant_chars} characters",
            hint=f"use a shorter tenant id, or raise the limit with {lim.setting('tenant_chars')}",
            retryable=False,
            details={"limit": "tenant_chars", "max": lim.tenant_chars},
        )
    if tenant_id != tenant_id.strip():
        raise _bad("bad_tenant", "the tenant id starts or ends with whitespace")
    if tenant_id.isprintable():
        return tenant_id
    for position, char in enumerate(tenant_id):
        if not char.isprintable():
            raise UsageError(
                "bad_tenant",
                f"the tenant id holds an unprintable character (U+{ord(char):04X}) "
                f"at position {position}",
                hint=_HINT,
                retryable=False,
                details={"position": position, "codepoint": f"U+{ord(char):04X}"},
            )
    return tenant_id
