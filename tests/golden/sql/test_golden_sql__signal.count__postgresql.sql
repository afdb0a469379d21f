-- template: signal.count
-- dialect: postgresql

-- role: main
WITH m AS 
(SELECT signals.tenant_id AS q_tenant, signals.id AS q_id, signals.message AS q_label, signals.id AS v_id, signals.kind AS v_kind, signals.severity AS v_severity, signals.message AS v_message, count(*) OVER () AS q_total, signals.id AS q_k0 
FROM signals 
WHERE signals.tenant_id = %(tenant_id)s::VARCHAR AND signals.kind IN (__[POSTCOMPILE_f0]) ORDER BY signals.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER)
 SELECT m.q_tenant, m.q_id, m.q_label, m.v_id, m.v_kind, m.v_severity, m.v_message, m.q_total, m.q_k0, g.q_baseline 
FROM (SELECT count(*) AS q_baseline 
FROM signals AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS g LEFT OUTER JOIN m ON true ORDER BY m.q_k0 COLLATE "C" ASC NULLS LAST
-- params: {"f0": ["alert", "metric"], "limit": 21, "tenant_id": "t1"}

-- role: baseline
SELECT count(*) AS n 
FROM signals 
WHERE signals.tenant_id = %(tenant_id)s::VARCHAR
-- params: {"tenant_id": "t1"}
