-- template: run.count
-- dialect: postgresql

-- role: main
WITH m AS 
(SELECT runs.tenant_id AS q_tenant, runs.id AS q_id, runs.question AS q_label, runs.id AS v_id, runs.question AS v_question, runs.status AS v_status, runs.started_at AS v_started_at, count(*) OVER () AS q_total, runs.id AS q_k0 
FROM runs 
WHERE runs.tenant_id = %(tenant_id)s::VARCHAR AND runs.status IN (__[POSTCOMPILE_f0]) AND (EXISTS (SELECT sf1.id 
FROM semantic_facts AS sf1 
WHERE sf1.tenant_id = %(tenant_id)s::VARCHAR AND sf1.entity_type = %(entity_type)s::VARCHAR AND sf1.entity_id = runs.id AND sf1.predicate = %(f1_pred)s::VARCHAR AND sf1.value_norm IN (__[POSTCOMPILE_f1]))) ORDER BY runs.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER)
 SELECT m.q_tenant, m.q_id, m.q_label, m.v_id, m.v_question, m.v_status, m.v_started_at, m.q_total, m.q_k0, g.q_baseline 
FROM (SELECT count(*) AS q_baseline 
FROM runs AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS g LEFT OUTER JOIN m ON true ORDER BY m.q_k0 COLLATE "C" ASC NULLS LAST
-- params: {"entity_type": "run", "f0": ["succeeded", "failed"], "f1": ["timeout"], "f1_pred": "error", "limit": 21, "tenant_id": "t1"}

-- role: evidence
SELECT %(param_1)s::INTEGER AS q_filter, semantic_facts.id, semantic_facts.tenant_id, semantic_facts.entity_type, semantic_facts.entity_id, semantic_facts.predicate, semantic_facts.value_text, semantic_facts.value_norm, semantic_facts.value_num, semantic_facts.source_type, semantic_facts.source_ref, semantic_facts.confidence, semantic_facts.observed_at, semantic_facts.valid_until 
FROM semantic_facts 
WHERE semantic_facts.tenant_id = %(tenant_id)s::VARCHAR AND semantic_facts.entity_type = %(entity_type)s::VARCHAR AND semantic_facts.entity_id = ANY (%(ids)s::TEXT[]) AND semantic_facts.predicate = %(f1_pred)s::VARCHAR AND semantic_facts.value_norm IN (__[POSTCOMPILE_f1])
-- params: {"entity_type": "run", "f1": ["timeout"], "f1_pred": "error", "ids": [], "tenant_id": "t1"}
-- bound at run time: ids

-- role: baseline
SELECT count(*) AS n 
FROM runs 
WHERE runs.tenant_id = %(tenant_id)s::VARCHAR
-- params: {"tenant_id": "t1"}
