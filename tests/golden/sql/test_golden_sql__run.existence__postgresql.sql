-- template: run.existence
-- dialect: postgresql

-- role: main
WITH m AS 
(SELECT runs.tenant_id AS q_tenant, runs.id AS q_id, runs.question AS q_label, runs.id AS v_id, runs.question AS v_question, runs.status AS v_status, runs.started_at AS v_started_at, runs.started_at AS q_k0, runs.id AS q_k1 
FROM runs 
WHERE runs.tenant_id = %(tenant_id)s::VARCHAR AND runs.status IN (__[POSTCOMPILE_f0]) AND (EXISTS (SELECT sf1.id 
FROM semantic_facts AS sf1 
WHERE sf1.tenant_id = %(tenant_id)s::VARCHAR AND sf1.entity_type = %(entity_type)s::VARCHAR AND sf1.entity_id = runs.id AND sf1.predicate = %(f1_pred)s::VARCHAR AND sf1.value_norm IN (__[POSTCOMPILE_f1]) AND (sf1.valid_until IS NULL OR sf1.valid_until > %(now)s::TIMESTAMP WITH TIME ZONE) AND sf1.observed_at >= %(fresh_since)s::TIMESTAMP WITH TIME ZONE)) ORDER BY runs.started_at DESC NULLS LAST, runs.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER)
 SELECT m.q_tenant, m.q_id, m.q_label, m.v_id, m.v_question, m.v_status, m.v_started_at, m.q_k0, m.q_k1, g.q_baseline, mf.id AS f_id, mf.tenant_id AS f_tenant_id, mf.entity_type AS f_entity_type, mf.entity_id AS f_entity_id, mf.predicate AS f_predicate, mf.value_text AS f_value_text, mf.value_norm AS f_value_norm, mf.value_num AS f_value_num, mf.source_type AS f_source_type, mf.source_ref AS f_source_ref, mf.confidence AS f_confidence, mf.observed_at AS f_observed_at, mf.valid_until AS f_valid_until, mf.q_filter 
FROM (SELECT count(*) AS q_baseline 
FROM runs AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS g LEFT OUTER JOIN m ON true LEFT OUTER JOIN (SELECT %(param_1)s::INTEGER AS q_filter, semantic_facts.id AS id, semantic_facts.tenant_id AS tenant_id, semantic_facts.entity_type AS entity_type, semantic_facts.entity_id AS entity_id, semantic_facts.predicate AS predicate, semantic_facts.value_text AS value_text, semantic_facts.value_norm AS value_norm, semantic_facts.value_num AS value_num, semantic_facts.source_type AS source_type, semantic_facts.source_ref AS source_ref, semantic_facts.confidence AS confidence, semantic_facts.observed_at AS observed_at, semantic_facts.valid_until AS valid_until 
FROM semantic_facts 
WHERE semantic_facts.tenant_id = %(tenant_id)s::VARCHAR AND semantic_facts.entity_type = %(entity_type)s::VARCHAR AND semantic_facts.entity_id IN (SELECT m.q_id 
FROM m) AND semantic_facts.predicate = %(f1_pred)s::VARCHAR AND semantic_facts.value_norm IN (__[POSTCOMPILE_f1]) AND (semantic_facts.valid_until IS NULL OR semantic_facts.valid_until > %(now)s::TIMESTAMP WITH TIME ZONE) AND semantic_facts.observed_at >= %(fresh_since)s::TIMESTAMP WITH TIME ZONE) AS mf ON mf.entity_id = m.q_id ORDER BY m.q_k0 DESC NULLS LAST, m.q_k1 COLLATE "C" ASC NULLS LAST, mf.q_filter, mf.id
-- params: {"entity_type": "run", "f0": ["succeeded", "failed"], "f1": ["timeout"], "f1_pred": "error", "fresh_since": "2026-08-03T00:00:00+00:00", "limit": 11, "now": "2026-11-01T00:00:00+00:00", "tenant_id": "t1"}

-- role: baseline
SELECT count(*) AS n 
FROM runs 
WHERE runs.tenant_id = %(tenant_id)s::VARCHAR
-- params: {"tenant_id": "t1"}

-- role: fallback
SELECT runs.tenant_id AS q_tenant, runs.id AS q_id, runs.question AS q_label, runs.id AS v_id, runs.question AS v_question, runs.status AS v_status, runs.started_at AS v_started_at, (SELECT count(*) AS count_1 
FROM runs AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS q_baseline, count(*) OVER () AS q_total, CASE WHEN (runs.question ILIKE %(g1_s0_text)s::VARCHAR ESCAPE '\' OR runs.error ILIKE %(g1_s0_text)s::VARCHAR ESCAPE '\') THEN %(slot0)s::INTEGER WHEN (runs.question ILIKE %(g1_s1_text)s::VARCHAR ESCAPE '\' OR runs.error ILIKE %(g1_s1_text)s::VARCHAR ESCAPE '\') THEN %(slot1)s::INTEGER WHEN (runs.question ILIKE %(g1_s2_text)s::VARCHAR ESCAPE '\' OR runs.error ILIKE %(g1_s2_text)s::VARCHAR ESCAPE '\') THEN %(slot2)s::INTEGER WHEN (runs.question ILIKE %(g1_s3_text)s::VARCHAR ESCAPE '\' OR runs.error ILIKE %(g1_s3_text)s::VARCHAR ESCAPE '\') THEN %(slot3)s::INTEGER WHEN (runs.question ILIKE %(g1_s4_text)s::VARCHAR ESCAPE '\' OR runs.error ILIKE %(g1_s4_text)s::VARCHAR ESCAPE '\') THEN %(slot4)s::INTEGER WHEN (runs.question ILIKE %(g1_s5_text)s::VARCHAR ESCAPE '\' OR runs.error ILIKE %(g1_s5_text)s::VARCHAR ESCAPE '\') THEN %(slot5)s::INTEGER WHEN (runs.question ILIKE %(g1_s6_text)s::VARCHAR ESCAPE '\' OR runs.error ILIKE %(g1_s6_text)s::VARCHAR ESCAPE '\') THEN %(slot6)s::INTEGER WHEN (runs.question ILIKE %(g1_s7_text)s::VARCHAR ESCAPE '\' OR runs.error ILIKE %(g1_s7_text)s::VARCHAR ESCAPE '\') THEN %(slot7)s::INTEGER END AS q_g1 
FROM runs JOIN (SELECT runs.id AS q_id 
FROM runs 
WHERE runs.tenant_id = %(tenant_id)s::VARCHAR AND runs.status IN (__[POSTCOMPILE_f0]) AND runs.id IN (SELECT text_grams.entity_id 
FROM text_grams 
WHERE text_grams.tenant_id = %(tenant_id)s::VARCHAR AND text_grams.entity_type = %(entity_type)s::VARCHAR AND text_grams.gram IN (__[POSTCOMPILE_g1_grams]) GROUP BY text_grams.entity_id 
HAVING count(DISTINCT CASE WHEN (text_grams.gram IN (__[POSTCOMPILE_g1_s0_grams])) THEN text_grams.gram END) = %(g1_s0_n)s::INTEGER OR count(DISTINCT CASE WHEN (text_grams.gram IN (__[POSTCOMPILE_g1_s1_grams])) THEN text_grams.gram END) = %(g1_s1_n)s::INTEGER OR count(DISTINCT CASE WHEN (text_grams.gram IN (__[POSTCOMPILE_g1_s2_grams])) THEN text_grams.gram END) = %(g1_s2_n)s::INTEGER OR count(DISTINCT CASE WHEN (text_grams.gram IN (__[POSTCOMPILE_g1_s3_grams])) THEN text_grams.gram END) = %(g1_s3_n)s::INTEGER OR count(DISTINCT CASE WHEN (text_grams.gram IN (__[POSTCOMPILE_g1_s4_grams])) THEN text_grams.gram END) = %(g1_s4_n)s::INTEGER OR count(DISTINCT CASE WHEN (text_grams.gram IN (__[POSTCOMPILE_g1_s5_grams])) THEN text_grams.gram END) = %(g1_s5_n)s::INTEGER OR count(DISTINCT CASE WHEN (text_grams.gram IN (__[POSTCOMPILE_g1_s6_grams])) THEN text_grams.gram END) = %(g1_s6_n)s::INTEGER OR count(DISTINCT CASE WHEN (text_grams.gram IN (__[POSTCOMPILE_g1_s7_grams])) THEN text_grams.gram END) = %(g1_s7_n)s::INTEGER) AND (runs.question ILIKE %(g1_s0_text)s::VARCHAR ESCAPE '\' OR runs.error ILIKE %(g1_s0_text)s::VARCHAR ESCAPE '\' OR runs.question ILIKE %(g1_s1_text)s::VARCHAR ESCAPE '\' OR runs.error ILIKE %(g1_s1_text)s::VARCHAR ESCAPE '\' OR runs.question ILIKE %(g1_s2_text)s::VARCHAR ESCAPE '\' OR runs.error ILIKE %(g1_s2_text)s::VARCHAR ESCAPE '\' OR runs.question ILIKE %(g1_s3_text)s::VARCHAR ESCAPE '\' OR runs.error ILIKE %(g1_s3_text)s::VARCHAR ESCAPE '\' OR runs.question ILIKE %(g1_s4_text)s::VARCHAR ESCAPE '\' OR runs.error ILIKE %(g1_s4_text)s::VARCHAR ESCAPE '\' OR runs.question ILIKE %(g1_s5_text)s::VARCHAR ESCAPE '\' OR runs.error ILIKE %(g1_s5_text)s::VARCHAR ESCAPE '\' OR runs.question ILIKE %(g1_s6_text)s::VARCHAR ESCAPE '\' OR runs.error ILIKE %(g1_s6_text)s::VARCHAR ESCAPE '\' OR runs.question ILIKE %(g1_s7_text)s::VARCHAR ESCAPE '\' OR runs.error ILIKE %(g1_s7_text)s::VARCHAR ESCAPE '\') ORDER BY runs.id 
 LIMIT %(fallback_cap)s::INTEGER) AS hits ON hits.q_id = runs.id 
WHERE runs.tenant_id = %(tenant_id)s::VARCHAR ORDER BY runs.started_at DESC NULLS LAST, runs.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"entity_type": "run", "f0": ["succeeded", "failed"], "fallback_cap": 101, "g1_grams": ["eo", "im", "me", "ou", "ti", "ut"], "g1_s0_grams": ["eo", "im", "me", "ou", "ti", "ut"], "g1_s0_n": 6, "g1_s0_text": "%timeout%", "g1_s1_grams": ["eo", "im", "me", "ou", "ti", "ut"], "g1_s1_n": 6, "g1_s1_text": "%timeout%", "g1_s2_grams": ["eo", "im", "me", "ou", "ti", "ut"], "g1_s2_n": 6, "g1_s2_text": "%timeout%", "g1_s3_grams": ["eo", "im", "me", "ou", "ti", "ut"], "g1_s3_n": 6, "g1_s3_text": "%timeout%", "g1_s4_grams": ["eo", "im", "me", "ou", "ti", "ut"], "g1_s4_n": 6, "g1_s4_text": "%timeout%", "g1_s5_grams": ["eo", "im", "me", "ou", "ti", "ut"], "g1_s5_n": 6, "g1_s5_text": "%timeout%", "g1_s6_grams": ["eo", "im", "me", "ou", "ti", "ut"], "g1_s6_n": 6, "g1_s6_text": "%timeout%", "g1_s7_grams": ["eo", "im", "me", "ou", "ti", "ut"], "g1_s7_n": 6, "g1_s7_text": "%timeout%", "limit": 11, "slot0": 0, "slot1": 1, "slot2": 2, "slot3": 3, "slot4": 4, "slot5": 5, "slot6": 6, "slot7": 7, "tenant_id": "t1"}

-- role: rows_by_id
SELECT runs.tenant_id AS q_tenant, runs.id AS q_id, runs.question AS q_label, runs.id AS v_id, runs.question AS v_question, runs.status AS v_status, runs.started_at AS v_started_at, (SELECT count(*) AS count_1 
FROM runs AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS q_baseline 
FROM runs 
WHERE runs.tenant_id = %(tenant_id)s::VARCHAR AND runs.id IN (__[POSTCOMPILE_ids]) ORDER BY runs.started_at DESC NULLS LAST, runs.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"ids": [], "limit": 11, "tenant_id": "t1"}
-- bound at run time: ids
