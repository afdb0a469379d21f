"""The bounded executor: whitelisted templates over the catalog, tenant-bound SQL.

Stages, one module each: `templates` (which entity/query-type pairs exist),
`tables` (table clauses from catalog names only), `bind` (filters to fields,
values to parameters), `predicates` and `statements` (SQLAlchemy Core, cached
per plan shape), `compile` (`prepare`, `compile_plan`), `flow` (the I/O-free
steps: facts first, bounded text fallback, evidence) and `run` (`execute`,
`aexecute`: the read-only, tenant-bound session). `result` is the contract
with the verifier.
"""
