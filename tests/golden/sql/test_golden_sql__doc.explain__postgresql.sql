-- template: doc.explain
-- dialect: postgresql

-- role: main
WITH m AS 
(SELECT docs.tenant_id AS q_tenant, docs.id AS q_id, docs.title AS q_label, docs.id AS v_id, docs.title AS v_title, docs.section AS v_section, docs.body AS v_body, docs.id AS q_k0 
FROM docs 
WHERE docs.tenant_id = %(tenant_id)s::VARCHAR AND lower(docs.section) LIKE %(f0)s::VARCHAR ESCAPE '\' AND (EXISTS (SELECT sf1.id 
FROM semantic_facts AS sf1 
WHERE sf1.tenant_id = %(tenant_id)s::VARCHAR AND sf1.entity_type = %(entity_type)s::VARCHAR AND sf1.entity_id = docs.id AND sf1.predicate = %(f1_pred)s::VARCHAR AND sf1.value_norm IN (__[POSTCOMPILE_f1]) AND (sf1.valid_until IS NULL OR sf1.valid_until > %(now)s::TIMESTAMP WITH TIME ZONE) AND sf1.observed_at >= %(fresh_since)s::TIMESTAMP WITH TIME ZONE)) ORDER BY docs.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER)
 SELECT m.q_tenant, m.q_id, m.q_label, m.v_id, m.v_title, m.v_section, m.v_body, m.q_k0, g.q_baseline, mf.id AS f_id, mf.tenant_id AS f_tenant_id, mf.entity_type AS f_entity_type, mf.entity_id AS f_entity_id, mf.predicate AS f_predicate, mf.value_text AS f_value_text, mf.value_norm AS f_value_norm, mf.value_num AS f_value_num, mf.source_type AS f_source_type, mf.source_ref AS f_source_ref, mf.confidence AS f_confidence, mf.observed_at AS f_observed_at, mf.valid_until AS f_valid_until, mf.q_filter 
FROM (SELECT count(*) AS q_baseline 
FROM docs AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS g LEFT OUTER JOIN m ON true LEFT OUTER JOIN (SELECT %(param_1)s::INTEGER AS q_filter, semantic_facts.id AS id, semantic_facts.tenant_id AS tenant_id, semantic_facts.entity_type AS entity_type, semantic_facts.entity_id AS entity_id, semantic_facts.predicate AS predicate, semantic_facts.value_text AS value_text, semantic_facts.value_norm AS value_norm, semantic_facts.value_num AS value_num, semantic_facts.source_type AS source_type, semantic_facts.source_ref AS source_ref, semantic_facts.confidence AS confidence, semantic_facts.observed_at AS observed_at, semantic_facts.valid_until AS valid_until 
FROM semantic_facts 
WHERE semantic_facts.tenant_id = %(tenant_id)s::VARCHAR AND semantic_facts.entity_type = %(entity_type)s::VARCHAR AND semantic_facts.entity_id IN (SELECT m.q_id 
FROM m) AND semantic_facts.predicate = %(f1_pred)s::VARCHAR AND semantic_facts.value_norm IN (__[POSTCOMPILE_f1]) AND (semantic_facts.valid_until IS NULL OR semantic_facts.valid_until > %(now)s::TIMESTAMP WITH TIME ZONE) AND semantic_facts.observed_at >= %(fresh_since)s::TIMESTAMP WITH TIME ZONE) AS mf ON mf.entity_id = m.q_id ORDER BY m.q_k0 COLLATE "C" ASC NULLS LAST, mf.q_filter, mf.id
-- params: {"entity_type": "doc", "f0": "%a%", "f1": ["architecture", "design", "system architecture", "架构", "系统架构"], "f1_pred": "topic", "fresh_since": "2026-08-03T00:00:00+00:00", "limit": 11, "now": "2026-11-01T00:00:00+00:00", "tenant_id": "t1"}

-- role: baseline
SELECT count(*) AS n 
FROM docs 
WHERE docs.tenant_id = %(tenant_id)s::VARCHAR
-- params: {"tenant_id": "t1"}

-- role: entity_facts
SELECT semantic_facts.id, semantic_facts.tenant_id, semantic_facts.entity_type, semantic_facts.entity_id, semantic_facts.predicate, semantic_facts.value_text, semantic_facts.value_norm, semantic_facts.value_num, semantic_facts.source_type, semantic_facts.source_ref, semantic_facts.confidence, semantic_facts.observed_at, semantic_facts.valid_until 
FROM semantic_facts 
WHERE semantic_facts.tenant_id = %(tenant_id)s::VARCHAR AND semantic_facts.entity_type = %(entity_type)s::VARCHAR AND semantic_facts.entity_id = ANY (CAST(%(ids)s::TEXT[] AS TEXT[])) AND (semantic_facts.valid_until IS NULL OR semantic_facts.valid_until > %(now)s::TIMESTAMP WITH TIME ZONE) AND semantic_facts.observed_at >= %(fresh_since)s::TIMESTAMP WITH TIME ZONE ORDER BY semantic_facts.entity_id, semantic_facts.predicate, semantic_facts.value_norm COLLATE "C", semantic_facts.id 
 LIMIT %(facts_cap)s::INTEGER
-- params: {"entity_type": "doc", "facts_cap": 1000, "fresh_since": "2026-08-03T00:00:00+00:00", "ids": [], "now": "2026-11-01T00:00:00+00:00", "tenant_id": "t1"}
-- bound at run time: ids

-- role: entity_facts_ranked
SELECT ef.id, ef.tenant_id, ef.entity_type, ef.entity_id, ef.predicate, ef.value_text, ef.value_norm, ef.value_num, ef.source_type, ef.source_ref, ef.confidence, ef.observed_at, ef.valid_until, ef.q_rank, ef.q_rank_down 
FROM (SELECT semantic_facts.id AS id, semantic_facts.tenant_id AS tenant_id, semantic_facts.entity_type AS entity_type, semantic_facts.entity_id AS entity_id, semantic_facts.predicate AS predicate, semantic_facts.value_text AS value_text, semantic_facts.value_norm AS value_norm, semantic_facts.value_num AS value_num, semantic_facts.source_type AS source_type, semantic_facts.source_ref AS source_ref, semantic_facts.confidence AS confidence, semantic_facts.observed_at AS observed_at, semantic_facts.valid_until AS valid_until, dense_rank() OVER (PARTITION BY semantic_facts.entity_id, semantic_facts.predicate ORDER BY semantic_facts.value_norm COLLATE "C" ASC) AS q_rank, dense_rank() OVER (PARTITION BY semantic_facts.entity_id, semantic_facts.predicate ORDER BY semantic_facts.value_norm COLLATE "C" DESC) AS q_rank_down 
FROM semantic_facts 
WHERE semantic_facts.tenant_id = %(tenant_id)s::VARCHAR AND semantic_facts.entity_type = %(entity_type)s::VARCHAR AND semantic_facts.entity_id = ANY (CAST(%(ids)s::TEXT[] AS TEXT[])) AND (semantic_facts.valid_until IS NULL OR semantic_facts.valid_until > %(now)s::TIMESTAMP WITH TIME ZONE) AND semantic_facts.observed_at >= %(fresh_since)s::TIMESTAMP WITH TIME ZONE) AS ef 
WHERE ef.q_rank <= %(values_cap)s::INTEGER ORDER BY ef.entity_id, ef.predicate, ef.q_rank, ef.id 
 LIMIT %(facts_cap)s::INTEGER
-- params: {"entity_type": "doc", "facts_cap": 1000, "fresh_since": "2026-08-03T00:00:00+00:00", "ids": [], "now": "2026-11-01T00:00:00+00:00", "tenant_id": "t1", "values_cap": 20}
-- bound at run time: ids

-- role: fallback
SELECT docs.tenant_id AS q_tenant, docs.id AS q_id, docs.title AS q_label, docs.id AS v_id, docs.title AS v_title, docs.section AS v_section, docs.body AS v_body, (SELECT count(*) AS count_1 
FROM docs AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS q_baseline, count(*) OVER () AS q_total, CASE WHEN (docs.title ILIKE %(g1_s0_text)s::VARCHAR ESCAPE '\' OR docs.body ILIKE %(g1_s0_text)s::VARCHAR ESCAPE '\') THEN %(slot0)s::INTEGER WHEN (docs.title ILIKE %(g1_s1_text)s::VARCHAR ESCAPE '\' OR docs.body ILIKE %(g1_s1_text)s::VARCHAR ESCAPE '\') THEN %(slot1)s::INTEGER WHEN (docs.title ILIKE %(g1_s2_text)s::VARCHAR ESCAPE '\' OR docs.body ILIKE %(g1_s2_text)s::VARCHAR ESCAPE '\') THEN %(slot2)s::INTEGER WHEN (docs.title ILIKE %(g1_s3_text)s::VARCHAR ESCAPE '\' OR docs.body ILIKE %(g1_s3_text)s::VARCHAR ESCAPE '\') THEN %(slot3)s::INTEGER WHEN (docs.title ILIKE %(g1_s4_text)s::VARCHAR ESCAPE '\' OR docs.body ILIKE %(g1_s4_text)s::VARCHAR ESCAPE '\') THEN %(slot4)s::INTEGER WHEN (docs.title ILIKE %(g1_s5_text)s::VARCHAR ESCAPE '\' OR docs.body ILIKE %(g1_s5_text)s::VARCHAR ESCAPE '\') THEN %(slot5)s::INTEGER WHEN (docs.title ILIKE %(g1_s6_text)s::VARCHAR ESCAPE '\' OR docs.body ILIKE %(g1_s6_text)s::VARCHAR ESCAPE '\') THEN %(slot6)s::INTEGER WHEN (docs.title ILIKE %(g1_s7_text)s::VARCHAR ESCAPE '\' OR docs.body ILIKE %(g1_s7_text)s::VARCHAR ESCAPE '\') THEN %(slot7)s::INTEGER END AS q_g1 
FROM docs JOIN (SELECT docs.id AS q_id 
FROM docs 
WHERE docs.tenant_id = %(tenant_id)s::VARCHAR AND lower(docs.section) LIKE %(f0)s::VARCHAR ESCAPE '\' AND docs.id IN (SELECT text_grams.entity_id 
FROM text_grams 
WHERE text_grams.tenant_id = %(tenant_id)s::VARCHAR AND text_grams.entity_type = %(entity_type)s::VARCHAR AND text_grams.gram IN (__[POSTCOMPILE_g1_grams]) GROUP BY text_grams.entity_id 
HAVING count(DISTINCT CASE WHEN (text_grams.gram IN (__[POSTCOMPILE_g1_s0_grams])) THEN text_grams.gram END) = %(g1_s0_n)s::INTEGER OR count(DISTINCT CASE WHEN (text_grams.gram IN (__[POSTCOMPILE_g1_s1_grams])) THEN text_grams.gram END) = %(g1_s1_n)s::INTEGER OR count(DISTINCT CASE WHEN (text_grams.gram IN (__[POSTCOMPILE_g1_s2_grams])) THEN text_grams.gram END) = %(g1_s2_n)s::INTEGER OR count(DISTINCT CASE WHEN (text_grams.gram IN (__[POSTCOMPILE_g1_s3_grams])) THEN text_grams.gram END) = %(g1_s3_n)s::INTEGER OR count(DISTINCT CASE WHEN (text_grams.gram IN (__[POSTCOMPILE_g1_s4_grams])) THEN text_grams.gram END) = %(g1_s4_n)s::INTEGER OR count(DISTINCT CASE WHEN (text_grams.gram IN (__[POSTCOMPILE_g1_s5_grams])) THEN text_grams.gram END) = %(g1_s5_n)s::INTEGER OR count(DISTINCT CASE WHEN (text_grams.gram IN (__[POSTCOMPILE_g1_s6_grams])) THEN text_grams.gram END) = %(g1_s6_n)s::INTEGER OR count(DISTINCT CASE WHEN (text_grams.gram IN (__[POSTCOMPILE_g1_s7_grams])) THEN text_grams.gram END) = %(g1_s7_n)s::INTEGER) AND (docs.title ILIKE %(g1_s0_text)s::VARCHAR ESCAPE '\' OR docs.body ILIKE %(g1_s0_text)s::VARCHAR ESCAPE '\' OR docs.title ILIKE %(g1_s1_text)s::VARCHAR ESCAPE '\' OR docs.body ILIKE %(g1_s1_text)s::VARCHAR ESCAPE '\' OR docs.title ILIKE %(g1_s2_text)s::VARCHAR ESCAPE '\' OR docs.body ILIKE %(g1_s2_text)s::VARCHAR ESCAPE '\' OR docs.title ILIKE %(g1_s3_text)s::VARCHAR ESCAPE '\' OR docs.body ILIKE %(g1_s3_text)s::VARCHAR ESCAPE '\' OR docs.title ILIKE %(g1_s4_text)s::VARCHAR ESCAPE '\' OR docs.body ILIKE %(g1_s4_text)s::VARCHAR ESCAPE '\' OR docs.title ILIKE %(g1_s5_text)s::VARCHAR ESCAPE '\' OR docs.body ILIKE %(g1_s5_text)s::VARCHAR ESCAPE '\' OR docs.title ILIKE %(g1_s6_text)s::VARCHAR ESCAPE '\' OR docs.body ILIKE %(g1_s6_text)s::VARCHAR ESCAPE '\' OR docs.title ILIKE %(g1_s7_text)s::VARCHAR ESCAPE '\' OR docs.body ILIKE %(g1_s7_text)s::VARCHAR ESCAPE '\') ORDER BY docs.id 
 LIMIT %(fallback_cap)s::INTEGER) AS hits ON hits.q_id = docs.id 
WHERE docs.tenant_id = %(tenant_id)s::VARCHAR ORDER BY docs.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"entity_type": "doc", "f0": "%a%", "fallback_cap": 51, "g1_grams": ["ar", "ch", "ct", "ec", "hi", "it", "rc", "re", "te", "tu", "ur", "de", "es", "gn", "ig", "si", " a", "em", "m ", "st", "sy", "ys", "架构", "系统", "统架"], "g1_s0_grams": ["ar", "ch", "ct", "ec", "hi", "it", "rc", "re", "te", "tu", "ur"], "g1_s0_n": 11, "g1_s0_text": "%architecture%", "g1_s1_grams": ["de", "es", "gn", "ig", "si"], "g1_s1_n": 5, "g1_s1_text": "%design%", "g1_s2_grams": [" a", "ar", "ch", "ct", "ec", "em", "hi", "it", "m ", "rc", "re", "st", "sy", "te", "tu", "ur", "ys"], "g1_s2_n": 17, "g1_s2_text": "%system architecture%", "g1_s3_grams": ["架构"], "g1_s3_n": 1, "g1_s3_text": "%架构%", "g1_s4_grams": ["架构", "系统", "统架"], "g1_s4_n": 3, "g1_s4_text": "%系统架构%", "g1_s5_grams": ["ar", "ch", "ct", "ec", "hi", "it", "rc", "re", "te", "tu", "ur"], "g1_s5_n": 11, "g1_s5_text": "%architecture%", "g1_s6_grams": ["ar", "ch", "ct", "ec", "hi", "it", "rc", "re", "te", "tu", "ur"], "g1_s6_n": 11, "g1_s6_text": "%architecture%", "g1_s7_grams": ["ar", "ch", "ct", "ec", "hi", "it", "rc", "re", "te", "tu", "ur"], "g1_s7_n": 11, "g1_s7_text": "%architecture%", "limit": 11, "slot0": 0, "slot1": 1, "slot2": 2, "slot3": 3, "slot4": 4, "slot5": 5, "slot6": 6, "slot7": 7, "tenant_id": "t1"}

-- role: rows_by_id
SELECT docs.tenant_id AS q_tenant, docs.id AS q_id, docs.title AS q_label, docs.id AS v_id, docs.title AS v_title, docs.section AS v_section, docs.body AS v_body, (SELECT count(*) AS count_1 
FROM docs AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS q_baseline 
FROM docs 
WHERE docs.tenant_id = %(tenant_id)s::VARCHAR AND docs.id IN (__[POSTCOMPILE_ids]) ORDER BY docs.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"ids": [], "limit": 11, "tenant_id": "t1"}
-- bound at run time: ids
