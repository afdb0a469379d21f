-- template: project.list
-- dialect: postgresql

-- role: main
WITH m AS 
(SELECT projects.tenant_id AS q_tenant, projects.id AS q_id, projects.title AS q_label, projects.id AS v_id, projects.title AS v_title, projects.status AS v_status, count(*) OVER () AS q_total, projects.created_at AS q_k0, projects.id AS q_k1 
FROM projects 
WHERE projects.tenant_id = %(tenant_id)s::VARCHAR AND projects.status IN (__[POSTCOMPILE_f0]) AND (EXISTS (SELECT sf1.id 
FROM semantic_facts AS sf1 
WHERE sf1.tenant_id = %(tenant_id)s::VARCHAR AND sf1.entity_type = %(entity_type)s::VARCHAR AND sf1.entity_id = projects.id AND sf1.predicate = %(f1_pred)s::VARCHAR AND sf1.value_norm IN (__[POSTCOMPILE_f1]))) ORDER BY projects.created_at DESC NULLS LAST, projects.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER)
 SELECT m.q_tenant, m.q_id, m.q_label, m.v_id, m.v_title, m.v_status, m.q_total, m.q_k0, m.q_k1, g.q_baseline 
FROM (SELECT count(*) AS q_baseline 
FROM projects AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS g LEFT OUTER JOIN m ON true ORDER BY m.q_k0 DESC NULLS LAST, m.q_k1 COLLATE "C" ASC NULLS LAST
-- params: {"entity_type": "project", "f0": ["active", "paused"], "f1": ["a share", "a shares", "a-share", "a-shares", "a股", "china a-share", "沪深a股"], "f1_pred": "market_theme", "limit": 102, "tenant_id": "t1"}

-- role: evidence
SELECT %(param_1)s::INTEGER AS q_filter, semantic_facts.id, semantic_facts.tenant_id, semantic_facts.entity_type, semantic_facts.entity_id, semantic_facts.predicate, semantic_facts.value_text, semantic_facts.value_norm, semantic_facts.value_num, semantic_facts.source_type, semantic_facts.source_ref, semantic_facts.confidence, semantic_facts.observed_at, semantic_facts.valid_until 
FROM semantic_facts 
WHERE semantic_facts.tenant_id = %(tenant_id)s::VARCHAR AND semantic_facts.entity_type = %(entity_type)s::VARCHAR AND semantic_facts.entity_id = ANY (CAST(%(ids)s::TEXT[] AS TEXT[])) AND semantic_facts.predicate = %(f1_pred)s::VARCHAR AND semantic_facts.value_norm IN (__[POSTCOMPILE_f1])
-- params: {"entity_type": "project", "f1": ["a share", "a shares", "a-share", "a-shares", "a股", "china a-share", "沪深a股"], "f1_pred": "market_theme", "ids": [], "tenant_id": "t1"}
-- bound at run time: ids

-- role: baseline
SELECT count(*) AS n 
FROM projects 
WHERE projects.tenant_id = %(tenant_id)s::VARCHAR
-- params: {"tenant_id": "t1"}
