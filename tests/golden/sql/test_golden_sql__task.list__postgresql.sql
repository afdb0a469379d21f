-- template: task.list
-- dialect: postgresql

-- role: main
SELECT tasks.tenant_id AS q_tenant, tasks.id AS q_id, tasks.title AS q_label, tasks.id AS v_id, tasks.title AS v_title, tasks.status AS v_status, tasks.project_id AS v_project_id, (SELECT count(*) AS count_1 
FROM tasks AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS q_baseline, count(*) OVER () AS q_total 
FROM tasks 
WHERE tasks.tenant_id = %(tenant_id)s::VARCHAR AND tasks.status IN (__[POSTCOMPILE_f0]) ORDER BY tasks.created_at DESC NULLS LAST, tasks.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"f0": ["todo", "doing"], "limit": 11, "tenant_id": "t1"}

-- role: baseline
SELECT count(*) AS n 
FROM tasks 
WHERE tasks.tenant_id = %(tenant_id)s::VARCHAR
-- params: {"tenant_id": "t1"}
