-- template: user.list
-- dialect: postgresql

-- role: main
SELECT users.tenant_id AS q_tenant, users.id AS q_id, users.name AS q_label, users.id AS v_id, users.name AS v_name, users.role AS v_role, (SELECT count(*) AS count_1 
FROM users AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS q_baseline, count(*) OVER () AS q_total 
FROM users 
WHERE users.tenant_id = %(tenant_id)s::VARCHAR AND users.role IN (__[POSTCOMPILE_f0]) ORDER BY users.name COLLATE "C" DESC NULLS LAST, users.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"f0": ["admin", "analyst"], "limit": 11, "tenant_id": "t1"}

-- role: baseline
SELECT count(*) AS n 
FROM users 
WHERE users.tenant_id = %(tenant_id)s::VARCHAR
-- params: {"tenant_id": "t1"}
