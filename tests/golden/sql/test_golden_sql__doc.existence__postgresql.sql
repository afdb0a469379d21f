-- template: doc.existence
-- dialect: postgresql

-- role: main
SELECT docs.tenant_id AS q_tenant, docs.id AS q_id, docs.title AS q_label, docs.id AS v_id, docs.title AS v_title, docs.section AS v_section, (SELECT count(*) AS count_1 
FROM docs AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS q_baseline 
FROM docs 
WHERE docs.tenant_id = %(tenant_id)s::VARCHAR AND lower(docs.section) LIKE %(f0)s::VARCHAR ESCAPE '\' AND (EXISTS (SELECT sf1.id 
FROM semantic_facts AS sf1 
WHERE sf1.tenant_id = %(tenant_id)s::VARCHAR AND sf1.entity_type = %(entity_type)s::VARCHAR AND sf1.entity_id = docs.id AND sf1.predicate = %(f1_pred)s::VARCHAR AND sf1.value_norm IN (__[POSTCOMPILE_f1]) AND (sf1.valid_until IS NULL OR sf1.valid_until > %(now)s::TIMESTAMP WITH TIME ZONE) AND sf1.observed_at >= %(fresh_since)s::TIMESTAMP WITH TIME ZONE)) ORDER BY docs.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"entity_type": "doc", "f0": "%a%", "f1": ["architecture", "design", "system architecture", "架构", "系统架构"], "f1_pred": "topic", "fresh_since": "2026-08-03T00:00:00+00:00", "limit": 11, "now": "2026-11-01T00:00:00+00:00", "tenant_id": "t1"}

-- role: baseline
SELECT count(*) AS n 
FROM docs 
WHERE docs.tenant_id = %(tenant_id)s::VARCHAR
-- params: {"tenant_id": "t1"}

-- role: match_facts.f1
SELECT semantic_facts.id, semantic_facts.tenant_id, semantic_facts.entity_type, semantic_facts.entity_id, semantic_facts.predicate, semantic_facts.value_text, semantic_facts.value_norm, semantic_facts.value_num, semantic_facts.source_type, semantic_facts.source_ref, semantic_facts.confidence, semantic_facts.observed_at, semantic_facts.valid_until 
FROM semantic_facts 
WHERE semantic_facts.tenant_id = %(tenant_id)s::VARCHAR AND semantic_facts.entity_type = %(entity_type)s::VARCHAR AND semantic_facts.entity_id IN (__[POSTCOMPILE_ids]) AND semantic_facts.predicate = %(f1_pred)s::VARCHAR AND semantic_facts.value_norm IN (__[POSTCOMPILE_f1]) AND (semantic_facts.valid_until IS NULL OR semantic_facts.valid_until > %(now)s::TIMESTAMP WITH TIME ZONE) AND semantic_facts.observed_at >= %(fresh_since)s::TIMESTAMP WITH TIME ZONE ORDER BY semantic_facts.entity_id, semantic_facts.id
-- params: {"entity_type": "doc", "f1": ["architecture", "design", "system architecture", "架构", "系统架构"], "f1_pred": "topic", "fresh_since": "2026-08-03T00:00:00+00:00", "ids": [], "now": "2026-11-01T00:00:00+00:00", "tenant_id": "t1"}
-- bound at run time: ids

-- role: fallback_ids
SELECT docs.id AS q_id 
FROM docs 
WHERE docs.tenant_id = %(tenant_id)s::VARCHAR AND lower(docs.section) LIKE %(f0)s::VARCHAR ESCAPE '\' AND docs.id IN (SELECT text_grams.entity_id 
FROM text_grams 
WHERE text_grams.tenant_id = %(tenant_id)s::VARCHAR AND text_grams.entity_type = %(entity_type)s::VARCHAR AND text_grams.gram IN (__[POSTCOMPILE_g1_grams]) GROUP BY text_grams.entity_id 
HAVING count(DISTINCT text_grams.gram) = %(g1_n)s::INTEGER) AND (docs.title ILIKE %(g1_text)s::VARCHAR ESCAPE '\' OR docs.body ILIKE %(g1_text)s::VARCHAR ESCAPE '\') ORDER BY docs.id 
 LIMIT %(fallback_cap)s::INTEGER
-- params: {"entity_type": "doc", "f0": "%a%", "fallback_cap": 51, "g1_grams": ["ar", "ch", "ct", "ec", "hi", "it", "rc", "re", "te", "tu", "ur"], "g1_n": 11, "g1_text": "%architecture%", "tenant_id": "t1"}

-- role: rows_by_id
SELECT docs.tenant_id AS q_tenant, docs.id AS q_id, docs.title AS q_label, docs.id AS v_id, docs.title AS v_title, docs.section AS v_section, (SELECT count(*) AS count_1 
FROM docs AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS q_baseline 
FROM docs 
WHERE docs.tenant_id = %(tenant_id)s::VARCHAR AND docs.id IN (__[POSTCOMPILE_ids]) ORDER BY docs.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"ids": [], "limit": 11, "tenant_id": "t1"}
-- bound at run time: ids
