-- template: task.count
-- dialect: postgresql

-- role: main
WITH m AS 
(SELECT tasks.tenant_id AS q_tenant, tasks.id AS q_id, tasks.title AS q_label, tasks.id AS v_id, tasks.title AS v_title, tasks.status AS v_status, tasks.project_id AS v_project_id, count(*) OVER () AS q_total, tasks.id AS q_k0 
FROM tasks 
WHERE tasks.tenant_id = %(tenant_id)s::VARCHAR AND tasks.status IN (__[POSTCOMPILE_f0]) ORDER BY tasks.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER)
 SELECT m.q_tenant, m.q_id, m.q_label, m.v_id, m.v_title, m.v_status, m.v_project_id, m.q_total, m.q_k0, g.q_baseline 
FROM (SELECT count(*) AS q_baseline 
FROM tasks AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS g LEFT OUTER JOIN m ON true ORDER BY m.q_k0 COLLATE "C" ASC NULLS LAST
-- params: {"f0": ["todo", "doing"], "limit": 21, "tenant_id": "t1"}

-- role: baseline
SELECT count(*) AS n 
FROM tasks 
WHERE tasks.tenant_id = %(tenant_id)s::VARCHAR
-- params: {"tenant_id": "t1"}
