-- plan: count customer where orders.payments is null
-- dialect: postgresql

-- role: main
WITH m AS 
(SELECT customers.tenant_id AS q_tenant, customers.id AS q_id, customers.name AS q_label, customers.id AS v_id, customers.name AS v_name, customers.city AS v_city, customers.tier AS v_tier, (SELECT count(*) AS count_1 
FROM customers AS matched 
WHERE matched.tenant_id = %(tenant_id)s::VARCHAR AND NOT (EXISTS (SELECT rel0_1.id 
FROM orders AS rel0_0, payments AS rel0_1 
WHERE rel0_0.customer_id = matched.id AND rel0_0.tenant_id = %(tenant_id)s::VARCHAR AND rel0_1.order_id = rel0_0.id AND rel0_1.tenant_id = %(tenant_id)s::VARCHAR))) AS q_total, customers.id AS q_k0 
FROM customers 
WHERE customers.tenant_id = %(tenant_id)s::VARCHAR AND NOT (EXISTS (SELECT rel0_1.id 
FROM orders AS rel0_0, payments AS rel0_1 
WHERE rel0_0.customer_id = customers.id AND rel0_0.tenant_id = %(tenant_id)s::VARCHAR AND rel0_1.order_id = rel0_0.id AND rel0_1.tenant_id = %(tenant_id)s::VARCHAR)) ORDER BY customers.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER)
 SELECT m.q_tenant, m.q_id, m.q_label, m.v_id, m.v_name, m.v_city, m.v_tier, m.q_total, m.q_k0, g.q_baseline 
FROM (SELECT count(*) AS q_baseline 
FROM customers AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS g LEFT OUTER JOIN m ON true ORDER BY m.q_k0 COLLATE "C" ASC NULLS LAST
-- params: {"limit": 21, "tenant_id": "nordwind"}

-- role: baseline
SELECT count(*) AS n 
FROM customers 
WHERE customers.tenant_id = %(tenant_id)s::VARCHAR
-- params: {"tenant_id": "nordwind"}
