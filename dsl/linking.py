"""Value linking: names only the data knows, matched against a question.

A catalog cannot list every person, city or customer. Fields marked
`link_values = true` have their distinct values, *of the asking tenant only*,
offered to the question reader as spellings. This module holds the shape of
that offer; building it from a database is `qdsl.facts.value_index`, which the
pipeline hands to the reader as a `ValueSource`. Keeping the reader on a plain
mapping keeps `dsl` free of database code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class LinkedValue:
    """One stored value of a linkable field: `entity.field = value` (as stored)."""

    entity: str
    field: str
    value: str


# normalize_text(value) -> every field that holds that value in this tenant
TenantValues = Mapping[str, tuple[LinkedValue, ...]]


class ValueSource(Protocol):
    """Where a tenant's linkable values come from (a database index, a test dict)."""

    def values_for(self, tenant_id: str) -> TenantValues:
        """The tenant's linkable values; never another tenant's."""
        ...


EMPTY_VALUES: TenantValues = {}
