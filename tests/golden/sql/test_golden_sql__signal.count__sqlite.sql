-- template: signal.count
-- dialect: sqlite

-- role: main
SELECT signals.tenant_id AS q_tenant, signals.id AS q_id, signals.message AS q_label, signals.id AS v_id, signals.kind AS v_kind, signals.severity AS v_severity, signals.message AS v_message, (SELECT count(*) AS count_1 
FROM signals AS base 
WHERE base.tenant_id = ?) AS q_baseline, count(*) OVER () AS q_total 
FROM signals 
WHERE signals.tenant_id = ? AND signals.kind IN (__[POSTCOMPILE_f0]) ORDER BY signals.id ASC NULLS LAST
 LIMIT ? OFFSET ?
-- params: {"f0": ["alert", "metric"], "limit": 11, "tenant_id": "t1"}

-- role: baseline
SELECT count(*) AS n 
FROM signals 
WHERE signals.tenant_id = ?
-- params: {"tenant_id": "t1"}
