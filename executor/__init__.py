"""The bounded executor: whitelisted templates over the catalog, tenant-bound SQL.

Stages, one module each: `templates` (which entity/query-type pairs exist),
`tables` (table clauses from catalog names only), `bind` (filters to fields,
values to parameters), `predicates` and `statements` (SQLAlchemy Core, cached
per plan shape), `compile` (`prepare`, `compile_plan`), `flow` (the I/O-free
steps: facts first, bounded text fallback, evidence), `session` (the one
tenant session every statement runs through, sync and asyncio, on every
engine configuration: its own read-only transaction and isolation level, the
reader role, the tenant setting and the statement timeout, from one table of
guarantees; `sqlite_pool` its read-only SQLite connections) and `run`
(`execute`, `aexecute`: a plan's steps driven through the session). `result`
is the contract with the verifier.
"""
