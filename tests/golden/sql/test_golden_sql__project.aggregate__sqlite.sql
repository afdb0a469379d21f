-- template: project.aggregate
-- dialect: sqlite

-- role: main
SELECT sum(projects.budget) AS aggregate_value, count(projects.budget) AS aggregate_values, count(*) AS aggregate_rows, CAST(? AS INTEGER) AS aggregate_probe 
FROM projects 
WHERE projects.tenant_id = ? AND projects.status IN (__[POSTCOMPILE_f0]) AND (EXISTS (SELECT sf1.id 
FROM semantic_facts AS sf1 
WHERE sf1.tenant_id = ? AND sf1.entity_type = ? AND sf1.entity_id = projects.id AND sf1.predicate = ? AND sf1.value_norm IN (__[POSTCOMPILE_f1])))
-- params: {"entity_type": "project", "f0": ["active", "paused"], "f1": ["a share", "a shares", "a-share", "a-shares", "a股", "china a-share", "沪深a股"], "f1_pred": "market_theme", "limit": 11, "tenant_id": "t1"}

-- role: rows
SELECT projects.tenant_id AS row_tenant, projects.id AS row_id, projects.title AS row_label, projects.budget AS aggregate_cited 
FROM projects 
WHERE projects.tenant_id = ? AND projects.status IN (__[POSTCOMPILE_f0]) AND (EXISTS (SELECT sf1.id 
FROM semantic_facts AS sf1 
WHERE sf1.tenant_id = ? AND sf1.entity_type = ? AND sf1.entity_id = projects.id AND sf1.predicate = ? AND sf1.value_norm IN (__[POSTCOMPILE_f1]))) AND projects.budget IS NOT NULL ORDER BY projects.created_at DESC NULLS LAST, projects.id ASC NULLS LAST
 LIMIT ? OFFSET ?
-- params: {"entity_type": "project", "f0": ["active", "paused"], "f1": ["a share", "a shares", "a-share", "a-shares", "a股", "china a-share", "沪深a股"], "f1_pred": "market_theme", "limit": 11, "tenant_id": "t1"}
