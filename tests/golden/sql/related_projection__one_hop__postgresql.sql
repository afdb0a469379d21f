-- plan: list order select number, customer.city
-- dialect: postgresql

-- role: main
SELECT orders.tenant_id AS q_tenant, orders.id AS q_id, orders.number AS q_label, orders.number AS v_number, (SELECT val_city_0.city 
FROM customers AS val_city_0 
WHERE val_city_0.id = orders.customer_id AND val_city_0.tenant_id = %(tenant_id)s::VARCHAR 
 LIMIT %(one_row)s::INTEGER) AS "v_customer.city", count(*) OVER () AS q_total 
FROM orders 
WHERE orders.tenant_id = %(tenant_id)s::VARCHAR ORDER BY orders.ordered_at DESC NULLS LAST, orders.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"limit": 21, "one_row": 1, "tenant_id": "nordwind"}

-- role: baseline
SELECT count(*) AS n 
FROM orders 
WHERE orders.tenant_id = %(tenant_id)s::VARCHAR
-- params: {"tenant_id": "nordwind"}
