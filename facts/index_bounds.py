"""How long a fact's value may be: what PostgreSQL's B-tree lookup index can hold.

`ix_semantic_facts_lookup` indexes (tenant_id, entity_type, predicate,
value_norm), the key every facts-first lookup probes. A B-tree refuses an
entry over a third of a page (`BTMaxItemSize`: 2,704 bytes with the standard
8 KB block), so a value whose entry would be larger fails the whole load with
`index row size … exceeds btree version 4 maximum 2704` (or, past what
PostgreSQL compresses, `index row requires … maximum size is 8191`). The
loader computes the entry's size for each row exactly as PostgreSQL lays it
out (`index_form_tuple`: an 8-byte header, each text a 1-byte header when its
UTF-8 form is at most 126 bytes, else 4-byte aligned with a 4-byte header,
the whole rounded up to 8) and refuses the row, named by its line, when it
could exceed the limit. The size is taken uncompressed: PostgreSQL compresses
a long entry only when its bytes allow, so a value that fits only compressed
would load or not depending on its letters.

Changing the index instead (a hash, or a prefix of the value) would let any
length load, but the lookups are equality and IN probes over the whole key,
served with the tenant, entity and predicate prefix, and a fact longer than
2.6 KB is text, not a value anyone matches whole: the fallback text search
exists for that. SQLite's B-trees hold any key, but the same bound applies on
SQLite (with PostgreSQL's standard block size), so a file that loads into one
database loads into the other.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Connection, func, select

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "btree_max_item",
    "index_entry_bytes",
    "server_max_item",
    "value_room",
]

DEFAULT_BLOCK_SIZE = 8192
_ALIGN = 8  # MAXALIGN on every 64-bit platform PostgreSQL supports
_PAGE_HEADER = 24  # SizeOfPageHeaderData
_ITEM_ID = 4  # sizeof(ItemIdData)
_BT_OPAQUE = 16  # sizeof(BTPageOpaqueData)
_ITEM_POINTER = 6  # sizeof(ItemPointerData): a heap TID a pivot tuple may carry
_TUPLE_HEADER = 8  # MAXALIGN(sizeof(IndexTupleData)), no NULL bitmap (all NOT NULL)
_SHORT_MAX = 126  # the longest text with a 1-byte varlena header (VARATT_SHORT_MAX - 1)


def _maxalign(n: int) -> int:
    return (n + _ALIGN - 1) & ~(_ALIGN - 1)


def btree_max_item(block_size: int = DEFAULT_BLOCK_SIZE) -> int:
    """BTMaxItemSize: the largest B-tree entry (2,704 bytes for 8 KB blocks)."""
    usable = block_size - _maxalign(_PAGE_HEADER + 3 * _ITEM_ID) - _maxalign(_BT_OPAQUE)
    return ((usable // 3) & ~(_ALIGN - 1)) - _maxalign(_ITEM_POINTER)


def _data_bytes(sizes: Iterable[int]) -> int:
    total = 0
    for n in sizes:
        if n <= _SHORT_MAX:
            total += n + 1
        else:
            total = ((total + 3) & ~3) + n + 4  # int-aligned, 4-byte header
    return total


def index_entry_bytes(texts: Iterable[str]) -> int:
    """The size of the B-tree entry for these text key columns, uncompressed."""
    return _maxalign(_TUPLE_HEADER + _data_bytes(len(t.encode("utf-8")) for t in texts))


def value_room(prefix: Iterable[str], max_item: int) -> int:
    """The most UTF-8 bytes a last key column may take after `prefix` within `max_item`."""
    head = _data_bytes(len(t.encode("utf-8")) for t in prefix)
    long_value = max_item - _TUPLE_HEADER - ((head + 3) & ~3) - 4
    short_fits = _maxalign(_TUPLE_HEADER + head + _SHORT_MAX + 1) <= max_item
    return max(long_value, _SHORT_MAX if short_fits else 0)


def server_max_item(conn: Connection) -> int:
    """BTMaxItemSize of the database behind `conn` (its block size on PostgreSQL)."""
    if conn.dialect.name != "postgresql":
        return btree_max_item()
    block = conn.execute(select(func.current_setting("block_size"))).scalar_one()
    return btree_max_item(int(block))
