-- template: run.existence
-- dialect: postgresql

-- role: main
SELECT runs.tenant_id AS q_tenant, runs.id AS q_id, runs.question AS q_label, runs.id AS v_id, runs.question AS v_question, runs.status AS v_status, runs.started_at AS v_started_at, (SELECT count(*) AS count_1 
FROM runs AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS q_baseline 
FROM runs 
WHERE runs.tenant_id = %(tenant_id)s::VARCHAR AND runs.status IN (__[POSTCOMPILE_f0]) AND (EXISTS (SELECT sf1.id 
FROM semantic_facts AS sf1 
WHERE sf1.tenant_id = %(tenant_id)s::VARCHAR AND sf1.entity_type = %(entity_type)s::VARCHAR AND sf1.entity_id = runs.id AND sf1.predicate = %(f1_pred)s::VARCHAR AND sf1.value_norm IN (__[POSTCOMPILE_f1]) AND (sf1.valid_until IS NULL OR sf1.valid_until > %(now)s::TIMESTAMP WITH TIME ZONE) AND sf1.observed_at >= %(fresh_since)s::TIMESTAMP WITH TIME ZONE)) ORDER BY runs.started_at DESC NULLS LAST, runs.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"entity_type": "run", "f0": ["succeeded", "failed"], "f1": ["timeout"], "f1_pred": "error", "fresh_since": "2026-08-03T00:00:00+00:00", "limit": 11, "now": "2026-11-01T00:00:00+00:00", "tenant_id": "t1"}

-- role: baseline
SELECT count(*) AS n 
FROM runs 
WHERE runs.tenant_id = %(tenant_id)s::VARCHAR
-- params: {"tenant_id": "t1"}

-- role: match_facts.f1
SELECT semantic_facts.id, semantic_facts.tenant_id, semantic_facts.entity_type, semantic_facts.entity_id, semantic_facts.predicate, semantic_facts.value_text, semantic_facts.value_norm, semantic_facts.value_num, semantic_facts.source_type, semantic_facts.source_ref, semantic_facts.confidence, semantic_facts.observed_at, semantic_facts.valid_until 
FROM semantic_facts 
WHERE semantic_facts.tenant_id = %(tenant_id)s::VARCHAR AND semantic_facts.entity_type = %(entity_type)s::VARCHAR AND semantic_facts.entity_id IN (__[POSTCOMPILE_ids]) AND semantic_facts.predicate = %(f1_pred)s::VARCHAR AND semantic_facts.value_norm IN (__[POSTCOMPILE_f1]) AND (semantic_facts.valid_until IS NULL OR semantic_facts.valid_until > %(now)s::TIMESTAMP WITH TIME ZONE) AND semantic_facts.observed_at >= %(fresh_since)s::TIMESTAMP WITH TIME ZONE ORDER BY semantic_facts.entity_id, semantic_facts.id
-- params: {"entity_type": "run", "f1": ["timeout"], "f1_pred": "error", "fresh_since": "2026-08-03T00:00:00+00:00", "ids": [], "now": "2026-11-01T00:00:00+00:00", "tenant_id": "t1"}
-- bound at run time: ids

-- role: fallback_ids
SELECT runs.id AS q_id 
FROM runs 
WHERE runs.tenant_id = %(tenant_id)s::VARCHAR AND runs.status IN (__[POSTCOMPILE_f0]) AND runs.id IN (SELECT text_grams.entity_id 
FROM text_grams 
WHERE text_grams.tenant_id = %(tenant_id)s::VARCHAR AND text_grams.entity_type = %(entity_type)s::VARCHAR AND text_grams.gram IN (__[POSTCOMPILE_g1_grams]) GROUP BY text_grams.entity_id 
HAVING count(DISTINCT text_grams.gram) = %(g1_n)s::INTEGER) AND (runs.question ILIKE %(g1_text)s::VARCHAR ESCAPE '\' OR runs.error ILIKE %(g1_text)s::VARCHAR ESCAPE '\') ORDER BY runs.id 
 LIMIT %(fallback_cap)s::INTEGER
-- params: {"entity_type": "run", "f0": ["succeeded", "failed"], "fallback_cap": 101, "g1_grams": ["eo", "im", "me", "ou", "ti", "ut"], "g1_n": 6, "g1_text": "%timeout%", "tenant_id": "t1"}

-- role: rows_by_id
SELECT runs.tenant_id AS q_tenant, runs.id AS q_id, runs.question AS q_label, runs.id AS v_id, runs.question AS v_question, runs.status AS v_status, runs.started_at AS v_started_at, (SELECT count(*) AS count_1 
FROM runs AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS q_baseline 
FROM runs 
WHERE runs.tenant_id = %(tenant_id)s::VARCHAR AND runs.id IN (__[POSTCOMPILE_ids]) ORDER BY runs.started_at DESC NULLS LAST, runs.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"ids": [], "limit": 11, "tenant_id": "t1"}
-- bound at run time: ids
