-- plan: list order where customer.city = "Berlin"
-- dialect: sqlite

-- role: main
WITH m AS 
(SELECT orders.tenant_id AS q_tenant, orders.id AS q_id, orders.number AS q_label, orders.id AS v_id, orders.number AS v_number, orders.status AS v_status, orders.ordered_at AS v_ordered_at, (SELECT count(*) AS count_1 
FROM orders AS matched 
WHERE matched.tenant_id = ? AND (EXISTS (SELECT rel0_0.id 
FROM customers AS rel0_0 
WHERE rel0_0.id = matched.customer_id AND rel0_0.tenant_id = ? AND lower(rel0_0.city) = ?))) AS q_total, orders.ordered_at AS q_k0, orders.id AS q_k1 
FROM orders 
WHERE orders.tenant_id = ? AND (EXISTS (SELECT rel0_0.id 
FROM customers AS rel0_0 
WHERE rel0_0.id = orders.customer_id AND rel0_0.tenant_id = ? AND lower(rel0_0.city) = ?)) ORDER BY orders.ordered_at DESC NULLS LAST, orders.id ASC NULLS LAST
 LIMIT ? OFFSET ?)
 SELECT m.q_tenant, m.q_id, m.q_label, m.v_id, m.v_number, m.v_status, m.v_ordered_at, m.q_total, m.q_k0, m.q_k1, g.q_baseline 
FROM (SELECT count(*) AS q_baseline 
FROM orders AS base 
WHERE base.tenant_id = ?) AS g LEFT OUTER JOIN m ON 1 = 1 ORDER BY m.q_k0 DESC NULLS LAST, m.q_k1 ASC NULLS LAST
-- params: {"f0": "berlin", "limit": 21, "tenant_id": "nordwind"}

-- role: baseline
SELECT count(*) AS n 
FROM orders 
WHERE orders.tenant_id = ?
-- params: {"tenant_id": "nordwind"}
