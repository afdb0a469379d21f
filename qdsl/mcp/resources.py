"""Stored results as MCP resources: `qdsl://refs/<refId>`.

`resources/list` lists the caller's tenant's live refs, newest first, a page
(`PAGE_SIZE`) at a time: `nextCursor` names the last ref listed, and the next
page starts after it, so refs made or collected between pages neither repeat
nor shift the pages;
`resources/read` returns a ref's stored envelope byte for byte as text, so its
sha256 is the `sha256` the tool result announced. A ref of another tenant is
missing, with the very error a missing ref gives (`ref/ref_not_found`), as in
the ref store itself.
"""

from __future__ import annotations

import mcp_types as types

from qdsl.dsl.errors import RefError, UsageError
from qdsl.envelope.records import RefRecord

SCHEME = "qdsl://refs/"
MIME = "application/json"
TEMPLATE = types.ResourceTemplate(
    uri_template=SCHEME + "{refId}",
    name="ref",
    title="A stored qdsl result",
    description="The full envelope of a result that was over the output budget "
    "(the refId of a tool result).",
    mime_type=MIME,
)


def ref_uri(ref_id: str) -> str:
    return SCHEME + ref_id


def ref_id_of(uri: str) -> str:
    if not uri.startswith(SCHEME) or len(uri) == len(SCHEME):
        raise RefError(
            "ref_not_found",
            f"not a qdsl ref resource: {uri[:100]!r}",
            hint=f"ref resources are {SCHEME}<refId>; see resources/list",
        )
    return uri[len(SCHEME) :]


def _resource(record: RefRecord) -> types.Resource:
    return types.Resource(
        uri=ref_uri(record.ref_id),
        name=record.ref_id,
        title=f"{record.operation} result",
        description=f"the full {record.operation} envelope, until {record.to_json()['expiresAt']}",
        mime_type=MIME,
        size=record.bytes,
    )


PAGE_SIZE = 25

Position = tuple[int, str]  # (created_ms, ref_id): newest first is this key descending


def _cursor(record: RefRecord) -> str:
    return f"{record.created_ms}.{record.ref_id}"


def _position(cursor: str) -> Position:
    created, sep, ref_id = cursor.partition(".")
    if not sep or not created.isdigit() or not ref_id or len(cursor) > 200:
        raise UsageError(
            "bad_cursor",
            f"not a cursor of this server's resources/list: {cursor[:100]!r}",
            hint="send back the nextCursor of the previous page, or none for the first page",
        )
    return int(created), ref_id


def list_refs(tenant: str, cursor: str | None = None) -> types.ListResourcesResult:
    """A page of `tenant`'s live refs, newest first, after `cursor` (None: the first)."""
    from qdsl.envelope.store import open_store

    after = _position(cursor) if cursor is not None else None
    # Refs made without a tenant are readable by all, but listed to no one here:
    # the list is this tenant's own results.
    own = sorted(
        (r for r in open_store().live(tenant=tenant) if r.tenant == tenant),
        key=lambda r: (r.created_ms, r.ref_id),
        reverse=True,
    )
    if after is not None:
        own = [r for r in own if (r.created_ms, r.ref_id) < after]
    page = own[:PAGE_SIZE]
    more = len(own) > PAGE_SIZE
    return types.ListResourcesResult(
        resources=[_resource(r) for r in page],
        next_cursor=_cursor(page[-1]) if more else None,
    )


def read_ref(tenant: str, uri: str) -> types.ReadResourceResult:
    from qdsl.envelope.store import open_store

    _record, payload = open_store().load(ref_id_of(uri), tenant=tenant)
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        raise RefError(
            "ref_corrupt", "the stored result is not UTF-8", hint="rerun the call"
        ) from None
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type=MIME, text=text)]
    )
