-- template: config.count
-- dialect: sqlite

-- role: main
SELECT configs.tenant_id AS q_tenant, configs.id AS q_id, configs."key" AS q_label, configs.id AS v_id, configs."key" AS v_key, configs.value AS v_value, (SELECT count(*) AS count_1 
FROM configs AS base 
WHERE base.tenant_id = ?) AS q_baseline, count(*) OVER () AS q_total 
FROM configs 
WHERE configs.tenant_id = ? AND instr(lower(configs."key"), ?) > ? ORDER BY configs.id ASC NULLS LAST
 LIMIT ? OFFSET ?
-- params: {"f0": "a", "limit": 11, "tenant_id": "t1"}

-- role: baseline
SELECT count(*) AS n 
FROM configs 
WHERE configs.tenant_id = ?
-- params: {"tenant_id": "t1"}
