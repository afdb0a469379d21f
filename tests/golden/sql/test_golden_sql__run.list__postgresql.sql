-- template: run.list
-- dialect: postgresql

-- role: main
SELECT runs.tenant_id AS q_tenant, runs.id AS q_id, runs.question AS q_label, runs.id AS v_id, runs.question AS v_question, runs.status AS v_status, runs.started_at AS v_started_at, (SELECT count(*) AS count_1 
FROM runs AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS q_baseline, count(*) OVER () AS q_total 
FROM runs 
WHERE runs.tenant_id = %(tenant_id)s::VARCHAR AND runs.status IN (__[POSTCOMPILE_f0]) AND (EXISTS (SELECT sf1.id 
FROM semantic_facts AS sf1 
WHERE sf1.tenant_id = %(tenant_id)s::VARCHAR AND sf1.entity_type = %(entity_type)s::VARCHAR AND sf1.entity_id = runs.id AND sf1.predicate = %(f1_pred)s::VARCHAR AND sf1.value_norm IN (__[POSTCOMPILE_f1]))) ORDER BY runs.started_at DESC NULLS LAST, runs.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"entity_type": "run", "f0": ["succeeded", "failed"], "f1": ["timeout"], "f1_pred": "error", "limit": 11, "tenant_id": "t1"}

-- role: baseline
SELECT count(*) AS n 
FROM runs 
WHERE runs.tenant_id = %(tenant_id)s::VARCHAR
-- params: {"tenant_id": "t1"}

-- role: match_facts.f1
SELECT semantic_facts.id, semantic_facts.tenant_id, semantic_facts.entity_type, semantic_facts.entity_id, semantic_facts.predicate, semantic_facts.value_text, semantic_facts.value_norm, semantic_facts.value_num, semantic_facts.source_type, semantic_facts.source_ref, semantic_facts.confidence, semantic_facts.observed_at, semantic_facts.valid_until 
FROM semantic_facts 
WHERE semantic_facts.tenant_id = %(tenant_id)s::VARCHAR AND semantic_facts.entity_type = %(entity_type)s::VARCHAR AND semantic_facts.entity_id IN (__[POSTCOMPILE_ids]) AND semantic_facts.predicate = %(f1_pred)s::VARCHAR AND semantic_facts.value_norm IN (__[POSTCOMPILE_f1]) ORDER BY semantic_facts.entity_id, semantic_facts.id
-- params: {"entity_type": "run", "f1": ["timeout"], "f1_pred": "error", "ids": [], "tenant_id": "t1"}
-- bound at run time: ids
