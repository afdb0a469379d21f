-- template: user.count
-- dialect: postgresql

-- role: main
WITH m AS 
(SELECT users.tenant_id AS q_tenant, users.id AS q_id, users.name AS q_label, users.id AS v_id, users.name AS v_name, users.role AS v_role, count(*) OVER () AS q_total, users.id AS q_k0 
FROM users 
WHERE users.tenant_id = %(tenant_id)s::VARCHAR AND users.role IN (__[POSTCOMPILE_f0]) ORDER BY users.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER)
 SELECT m.q_tenant, m.q_id, m.q_label, m.v_id, m.v_name, m.v_role, m.q_total, m.q_k0, g.q_baseline 
FROM (SELECT count(*) AS q_baseline 
FROM users AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS g LEFT OUTER JOIN m ON true ORDER BY m.q_k0 COLLATE "C" ASC NULLS LAST
-- params: {"f0": ["admin", "analyst"], "limit": 21, "tenant_id": "t1"}

-- role: baseline
SELECT count(*) AS n 
FROM users 
WHERE users.tenant_id = %(tenant_id)s::VARCHAR
-- params: {"tenant_id": "t1"}
