-- template: task.status
-- dialect: sqlite

-- role: main
SELECT tasks.tenant_id AS q_tenant, tasks.id AS q_id, tasks.title AS q_label, tasks.id AS v_id, tasks.title AS v_title, tasks.status AS v_status, tasks.project_id AS v_project_id, tasks.assignee AS v_assignee, tasks.due_at AS v_due_at, (SELECT count(*) AS count_1 
FROM tasks AS base 
WHERE base.tenant_id = ?) AS q_baseline 
FROM tasks 
WHERE tasks.tenant_id = ? AND tasks.status IN (__[POSTCOMPILE_f0]) AND tasks.id IN (__[POSTCOMPILE_subject_ids]) ORDER BY tasks.created_at DESC NULLS LAST, tasks.id ASC NULLS LAST
 LIMIT ? OFFSET ?
-- params: {"f0": ["todo", "doing"], "limit": 11, "subject_ids": ["12"], "tenant_id": "t1"}

-- role: baseline
SELECT count(*) AS n 
FROM tasks 
WHERE tasks.tenant_id = ?
-- params: {"tenant_id": "t1"}

-- role: entity_facts
SELECT semantic_facts.id, semantic_facts.tenant_id, semantic_facts.entity_type, semantic_facts.entity_id, semantic_facts.predicate, semantic_facts.value_text, semantic_facts.value_norm, semantic_facts.value_num, semantic_facts.source_type, semantic_facts.source_ref, semantic_facts.confidence, semantic_facts.observed_at, semantic_facts.valid_until 
FROM semantic_facts 
WHERE semantic_facts.tenant_id = ? AND semantic_facts.entity_type = ? AND semantic_facts.entity_id IN (__[POSTCOMPILE_ids]) ORDER BY semantic_facts.entity_id, semantic_facts.predicate, semantic_facts.id
 LIMIT ? OFFSET ?
-- params: {"entity_type": "task", "facts_cap": 1000, "ids": [], "tenant_id": "t1"}
-- bound at run time: ids
