-- template: config.count
-- dialect: postgresql

-- role: main
WITH m AS 
(SELECT configs.tenant_id AS q_tenant, configs.id AS q_id, configs.key AS q_label, configs.id AS v_id, configs.key AS v_key, configs.value AS v_value, count(*) OVER () AS q_total, configs.id AS q_k0 
FROM configs 
WHERE configs.tenant_id = %(tenant_id)s::VARCHAR AND lower(configs.key) LIKE %(f0)s::VARCHAR ESCAPE '\' ORDER BY configs.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER)
 SELECT m.q_tenant, m.q_id, m.q_label, m.v_id, m.v_key, m.v_value, m.q_total, m.q_k0, g.q_baseline 
FROM (SELECT count(*) AS q_baseline 
FROM configs AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS g LEFT OUTER JOIN m ON true ORDER BY m.q_k0 COLLATE "C" ASC NULLS LAST
-- params: {"f0": "%a%", "limit": 21, "tenant_id": "t1"}

-- role: baseline
SELECT count(*) AS n 
FROM configs 
WHERE configs.tenant_id = %(tenant_id)s::VARCHAR
-- params: {"tenant_id": "t1"}
