"""Stored results as MCP resources: `qdsl://refs/<refId>`.

`resources/list` lists the caller's tenant's live refs (newest first);
`resources/read` returns a ref's stored envelope byte for byte as text, so its
sha256 is the `sha256` the tool result announced. A ref of another tenant is
missing, with the very error a missing ref gives (`ref/ref_not_found`), as in
the ref store itself.
"""

from __future__ import annotations

import mcp_types as types

from qdsl.dsl.errors import RefError
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


def list_refs(tenant: str) -> types.ListResourcesResult:
    from qdsl.envelope.store import open_store

    # Refs made without a tenant are readable by all, but listed to no one here:
    # the list is this tenant's own results.
    own = [r for r in open_store().live(tenant=tenant) if r.tenant == tenant]
    return types.ListResourcesResult(resources=[_resource(r) for r in reversed(own)])


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
