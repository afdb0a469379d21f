-- template: run.diagnose
-- dialect: postgresql

-- role: main
WITH m AS 
(SELECT runs.tenant_id AS q_tenant, runs.id AS q_id, runs.question AS q_label, runs.id AS v_id, runs.question AS v_question, runs.status AS v_status, runs.started_at AS v_started_at, runs.project_id AS v_project_id, runs.started_at AS q_k0, runs.id AS q_k1 
FROM runs 
WHERE runs.tenant_id = %(tenant_id)s::VARCHAR AND runs.status IN (__[POSTCOMPILE_f0]) AND runs.id IN (__[POSTCOMPILE_subject_ids]) ORDER BY runs.started_at DESC NULLS LAST, runs.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER)
 SELECT m.q_tenant, m.q_id, m.q_label, m.v_id, m.v_question, m.v_status, m.v_started_at, m.v_project_id, m.q_k0, m.q_k1, g.q_baseline 
FROM (SELECT count(*) AS q_baseline 
FROM runs AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS g LEFT OUTER JOIN m ON true ORDER BY m.q_k0 DESC NULLS LAST, m.q_k1 COLLATE "C" ASC NULLS LAST
-- params: {"f0": ["succeeded", "failed"], "limit": 11, "subject_ids": ["12"], "tenant_id": "t1"}

-- role: baseline
SELECT count(*) AS n 
FROM runs 
WHERE runs.tenant_id = %(tenant_id)s::VARCHAR
-- params: {"tenant_id": "t1"}

-- role: entity_facts
SELECT semantic_facts.id, semantic_facts.tenant_id, semantic_facts.entity_type, semantic_facts.entity_id, semantic_facts.predicate, semantic_facts.value_text, semantic_facts.value_norm, semantic_facts.value_num, semantic_facts.source_type, semantic_facts.source_ref, semantic_facts.confidence, semantic_facts.observed_at, semantic_facts.valid_until 
FROM semantic_facts 
WHERE semantic_facts.tenant_id = %(tenant_id)s::VARCHAR AND semantic_facts.entity_type = %(entity_type)s::VARCHAR AND semantic_facts.entity_id = ANY (CAST(%(ids)s::TEXT[] AS TEXT[])) ORDER BY semantic_facts.entity_id, semantic_facts.predicate, semantic_facts.value_norm COLLATE "C", semantic_facts.id 
 LIMIT %(facts_cap)s::INTEGER
-- params: {"entity_type": "run", "facts_cap": 1000, "ids": [], "tenant_id": "t1"}
-- bound at run time: ids

-- role: entity_facts_ranked
SELECT ef.id, ef.tenant_id, ef.entity_type, ef.entity_id, ef.predicate, ef.value_text, ef.value_norm, ef.value_num, ef.source_type, ef.source_ref, ef.confidence, ef.observed_at, ef.valid_until, ef.q_rank, ef.q_rank_down 
FROM (SELECT semantic_facts.id AS id, semantic_facts.tenant_id AS tenant_id, semantic_facts.entity_type AS entity_type, semantic_facts.entity_id AS entity_id, semantic_facts.predicate AS predicate, semantic_facts.value_text AS value_text, semantic_facts.value_norm AS value_norm, semantic_facts.value_num AS value_num, semantic_facts.source_type AS source_type, semantic_facts.source_ref AS source_ref, semantic_facts.confidence AS confidence, semantic_facts.observed_at AS observed_at, semantic_facts.valid_until AS valid_until, dense_rank() OVER (PARTITION BY semantic_facts.entity_id, semantic_facts.predicate ORDER BY semantic_facts.value_norm COLLATE "C" ASC) AS q_rank, dense_rank() OVER (PARTITION BY semantic_facts.entity_id, semantic_facts.predicate ORDER BY semantic_facts.value_norm COLLATE "C" DESC) AS q_rank_down 
FROM semantic_facts 
WHERE semantic_facts.tenant_id = %(tenant_id)s::VARCHAR AND semantic_facts.entity_type = %(entity_type)s::VARCHAR AND semantic_facts.entity_id = ANY (CAST(%(ids)s::TEXT[] AS TEXT[]))) AS ef 
WHERE ef.q_rank <= %(values_cap)s::INTEGER ORDER BY ef.entity_id, ef.predicate, ef.q_rank, ef.id 
 LIMIT %(facts_cap)s::INTEGER
-- params: {"entity_type": "run", "facts_cap": 1000, "ids": [], "tenant_id": "t1", "values_cap": 20}
-- bound at run time: ids
