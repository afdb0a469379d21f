-- template: project.breakdown
-- dialect: postgresql

-- role: main
SELECT breakdown_members.breakdown_key_0, breakdown_members.breakdown_key_1, count(*) AS breakdown_value, sum(count(*)) OVER () AS breakdown_total, count(*) OVER () AS breakdown_groups, CAST(%(limit)s::INTEGER AS INTEGER) AS breakdown_probe 
FROM (SELECT CAST(date_trunc(%(param_1)s::VARCHAR, timezone(%(param_2)s::VARCHAR, CAST(projects.created_at AS TIMESTAMP WITH TIME ZONE))) AS DATE) AS breakdown_key_0, projects.status AS breakdown_key_1, projects.tenant_id AS row_tenant, projects.id AS row_id, projects.title AS row_label, projects.id AS breakdown_order 
FROM projects 
WHERE projects.tenant_id = %(tenant_id)s::VARCHAR AND projects.status IN (__[POSTCOMPILE_f0]) AND (EXISTS (SELECT sf1.id 
FROM semantic_facts AS sf1 
WHERE sf1.tenant_id = %(tenant_id)s::VARCHAR AND sf1.entity_type = %(entity_type)s::VARCHAR AND sf1.entity_id = projects.id AND sf1.predicate = %(f1_pred)s::VARCHAR AND sf1.value_norm IN (__[POSTCOMPILE_f1])))) AS breakdown_members GROUP BY breakdown_members.breakdown_key_0, breakdown_members.breakdown_key_1 ORDER BY count(*) DESC, breakdown_members.breakdown_key_0 ASC NULLS LAST, breakdown_members.breakdown_key_1 COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"entity_type": "project", "f0": ["active", "paused"], "f1": ["a share", "a shares", "a-share", "a-shares", "a股", "china a-share", "沪深a股"], "f1_pred": "market_theme", "limit": 11, "tenant_id": "t1"}

-- role: rows
SELECT breakdown_ranked.breakdown_key_0, breakdown_ranked.breakdown_key_1, breakdown_ranked.row_tenant, breakdown_ranked.row_id, breakdown_ranked.row_label 
FROM (SELECT breakdown_members.breakdown_key_0 AS breakdown_key_0, breakdown_members.breakdown_key_1 AS breakdown_key_1, breakdown_members.row_tenant AS row_tenant, breakdown_members.row_id AS row_id, breakdown_members.row_label AS row_label, row_number() OVER (PARTITION BY breakdown_members.breakdown_key_0, breakdown_members.breakdown_key_1 ORDER BY breakdown_members.breakdown_order COLLATE "C" ASC) AS breakdown_rank 
FROM (SELECT CAST(date_trunc(%(param_1)s::VARCHAR, timezone(%(param_2)s::VARCHAR, CAST(projects.created_at AS TIMESTAMP WITH TIME ZONE))) AS DATE) AS breakdown_key_0, projects.status AS breakdown_key_1, projects.tenant_id AS row_tenant, projects.id AS row_id, projects.title AS row_label, projects.id AS breakdown_order 
FROM projects 
WHERE projects.tenant_id = %(tenant_id)s::VARCHAR AND projects.status IN (__[POSTCOMPILE_f0]) AND (EXISTS (SELECT sf1.id 
FROM semantic_facts AS sf1 
WHERE sf1.tenant_id = %(tenant_id)s::VARCHAR AND sf1.entity_type = %(entity_type)s::VARCHAR AND sf1.entity_id = projects.id AND sf1.predicate = %(f1_pred)s::VARCHAR AND sf1.value_norm IN (__[POSTCOMPILE_f1])))) AS breakdown_members) AS breakdown_ranked JOIN (SELECT breakdown_members.breakdown_key_0 AS breakdown_key_0, breakdown_members.breakdown_key_1 AS breakdown_key_1, count(*) AS breakdown_value, sum(count(*)) OVER () AS breakdown_total, count(*) OVER () AS breakdown_groups, CAST(%(limit)s::INTEGER AS INTEGER) AS breakdown_probe 
FROM (SELECT CAST(date_trunc(%(param_1)s::VARCHAR, timezone(%(param_2)s::VARCHAR, CAST(projects.created_at AS TIMESTAMP WITH TIME ZONE))) AS DATE) AS breakdown_key_0, projects.status AS breakdown_key_1, projects.tenant_id AS row_tenant, projects.id AS row_id, projects.title AS row_label, projects.id AS breakdown_order 
FROM projects 
WHERE projects.tenant_id = %(tenant_id)s::VARCHAR AND projects.status IN (__[POSTCOMPILE_f0]) AND (EXISTS (SELECT sf1.id 
FROM semantic_facts AS sf1 
WHERE sf1.tenant_id = %(tenant_id)s::VARCHAR AND sf1.entity_type = %(entity_type)s::VARCHAR AND sf1.entity_id = projects.id AND sf1.predicate = %(f1_pred)s::VARCHAR AND sf1.value_norm IN (__[POSTCOMPILE_f1])))) AS breakdown_members GROUP BY breakdown_members.breakdown_key_0, breakdown_members.breakdown_key_1 ORDER BY count(*) DESC, breakdown_members.breakdown_key_0 ASC NULLS LAST, breakdown_members.breakdown_key_1 COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER) AS breakdown_top ON breakdown_ranked.breakdown_key_0 IS NOT DISTINCT FROM breakdown_top.breakdown_key_0 AND breakdown_ranked.breakdown_key_1 IS NOT DISTINCT FROM breakdown_top.breakdown_key_1 
WHERE breakdown_ranked.breakdown_rank <= %(breakdown_rank_1)s::INTEGER ORDER BY breakdown_ranked.row_id
-- params: {"entity_type": "project", "f0": ["active", "paused"], "f1": ["a share", "a shares", "a-share", "a-shares", "a股", "china a-share", "沪深a股"], "f1_pred": "market_theme", "limit": 11, "tenant_id": "t1"}
