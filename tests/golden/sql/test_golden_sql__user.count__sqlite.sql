-- template: user.count
-- dialect: sqlite

-- role: main
SELECT users.tenant_id AS q_tenant, users.id AS q_id, users.name AS q_label, users.id AS v_id, users.name AS v_name, users.role AS v_role, (SELECT count(*) AS count_1 
FROM users AS base 
WHERE base.tenant_id = ?) AS q_baseline, count(*) OVER () AS q_total 
FROM users 
WHERE users.tenant_id = ? AND users.role IN (__[POSTCOMPILE_f0]) ORDER BY users.id ASC NULLS LAST
 LIMIT ? OFFSET ?
-- params: {"f0": ["admin", "analyst"], "limit": 11, "tenant_id": "t1"}

-- role: baseline
SELECT count(*) AS n 
FROM users 
WHERE users.tenant_id = ?
-- params: {"tenant_id": "t1"}
