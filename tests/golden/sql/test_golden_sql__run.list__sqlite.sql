-- template: run.list
-- dialect: sqlite

-- role: main
WITH m AS 
(SELECT runs.tenant_id AS q_tenant, runs.id AS q_id, runs.question AS q_label, runs.id AS v_id, runs.question AS v_question, runs.status AS v_status, runs.started_at AS v_started_at, count(*) OVER () AS q_total, runs.started_at AS q_k0, runs.id AS q_k1 
FROM runs 
WHERE runs.tenant_id = ? AND runs.status IN (__[POSTCOMPILE_f0]) AND (EXISTS (SELECT sf1.id 
FROM semantic_facts AS sf1 
WHERE sf1.tenant_id = ? AND sf1.entity_type = ? AND sf1.entity_id = runs.id AND sf1.predicate = ? AND sf1.value_norm IN (__[POSTCOMPILE_f1]))) ORDER BY runs.started_at DESC NULLS LAST, runs.id ASC NULLS LAST
 LIMIT ? OFFSET ?)
 SELECT m.q_tenant, m.q_id, m.q_label, m.v_id, m.v_question, m.v_status, m.v_started_at, m.q_total, m.q_k0, m.q_k1, g.q_baseline, mf.id AS f_id, mf.tenant_id AS f_tenant_id, mf.entity_type AS f_entity_type, mf.entity_id AS f_entity_id, mf.predicate AS f_predicate, mf.value_text AS f_value_text, mf.value_norm AS f_value_norm, mf.value_num AS f_value_num, mf.source_type AS f_source_type, mf.source_ref AS f_source_ref, mf.confidence AS f_confidence, mf.observed_at AS f_observed_at, mf.valid_until AS f_valid_until, mf.q_filter 
FROM (SELECT count(*) AS q_baseline 
FROM runs AS base 
WHERE base.tenant_id = ?) AS g LEFT OUTER JOIN m ON 1 = 1 LEFT OUTER JOIN (SELECT ? AS q_filter, semantic_facts.id AS id, semantic_facts.tenant_id AS tenant_id, semantic_facts.entity_type AS entity_type, semantic_facts.entity_id AS entity_id, semantic_facts.predicate AS predicate, semantic_facts.value_text AS value_text, semantic_facts.value_norm AS value_norm, semantic_facts.value_num AS value_num, semantic_facts.source_type AS source_type, semantic_facts.source_ref AS source_ref, semantic_facts.confidence AS confidence, semantic_facts.observed_at AS observed_at, semantic_facts.valid_until AS valid_until 
FROM semantic_facts 
WHERE semantic_facts.tenant_id = ? AND semantic_facts.entity_type = ? AND semantic_facts.entity_id IN (SELECT m.q_id 
FROM m) AND semantic_facts.predicate = ? AND semantic_facts.value_norm IN (__[POSTCOMPILE_f1])) AS mf ON mf.entity_id = m.q_id ORDER BY m.q_k0 DESC NULLS LAST, m.q_k1 ASC NULLS LAST, mf.q_filter, mf.id
-- params: {"entity_type": "run", "f0": ["succeeded", "failed"], "f1": ["timeout"], "f1_pred": "error", "limit": 11, "tenant_id": "t1"}

-- role: baseline
SELECT count(*) AS n 
FROM runs 
WHERE runs.tenant_id = ?
-- params: {"tenant_id": "t1"}
