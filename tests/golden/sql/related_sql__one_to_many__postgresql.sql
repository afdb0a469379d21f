-- plan: count order where payments.refunded = true
-- dialect: postgresql

-- role: main
WITH m AS 
(SELECT orders.tenant_id AS q_tenant, orders.id AS q_id, orders.number AS q_label, orders.id AS v_id, orders.number AS v_number, orders.status AS v_status, orders.ordered_at AS v_ordered_at, (SELECT count(*) AS count_1 
FROM orders AS matched 
WHERE matched.tenant_id = %(tenant_id)s::VARCHAR AND (EXISTS (SELECT rel0_0.id 
FROM payments AS rel0_0 
WHERE rel0_0.order_id = matched.id AND rel0_0.tenant_id = %(tenant_id)s::VARCHAR AND rel0_0.refunded = %(f0)s))) AS q_total, orders.id AS q_k0 
FROM orders 
WHERE orders.tenant_id = %(tenant_id)s::VARCHAR AND (EXISTS (SELECT rel0_0.id 
FROM payments AS rel0_0 
WHERE rel0_0.order_id = orders.id AND rel0_0.tenant_id = %(tenant_id)s::VARCHAR AND rel0_0.refunded = %(f0)s)) ORDER BY orders.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER)
 SELECT m.q_tenant, m.q_id, m.q_label, m.v_id, m.v_number, m.v_status, m.v_ordered_at, m.q_total, m.q_k0, g.q_baseline 
FROM (SELECT count(*) AS q_baseline 
FROM orders AS base 
WHERE base.tenant_id = %(tenant_id)s::VARCHAR) AS g LEFT OUTER JOIN m ON true ORDER BY m.q_k0 COLLATE "C" ASC NULLS LAST
-- params: {"f0": true, "limit": 21, "tenant_id": "nordwind"}

-- role: baseline
SELECT count(*) AS n 
FROM orders 
WHERE orders.tenant_id = %(tenant_id)s::VARCHAR
-- params: {"tenant_id": "nordwind"}
