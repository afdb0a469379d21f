-- template: config.list
-- dialect: postgresql

-- role: main
SELECT configs.tenant_id AS q_tenant, configs.id AS q_id, configs.key AS q_label, configs.id AS v_id, configs.key AS v_key, configs.value AS v_value, (SELECT count(*) AS count_1 
FROM configs AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS q_baseline, count(*) OVER () AS q_total 
FROM configs 
WHERE configs.tenant_id = %(tenant_id)s::VARCHAR AND lower(configs.key) LIKE %(f0)s::VARCHAR ESCAPE '\' ORDER BY configs.key COLLATE "C" DESC NULLS LAST, configs.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"f0": "%a%", "limit": 11, "tenant_id": "t1"}

-- role: baseline
SELECT count(*) AS n 
FROM configs 
WHERE configs.tenant_id = %(tenant_id)s::VARCHAR
-- params: {"tenant_id": "t1"}
