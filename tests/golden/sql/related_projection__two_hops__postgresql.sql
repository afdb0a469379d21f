-- plan: list order_line select title, order.customer.city
-- dialect: postgresql

-- role: main
SELECT order_lines.tenant_id AS q_tenant, order_lines.id AS q_id, order_lines.title AS q_label, order_lines.title AS v_title, (SELECT val_city_1.city 
FROM orders AS val_city_0, customers AS val_city_1 
WHERE val_city_0.id = order_lines.order_id AND val_city_0.tenant_id = %(tenant_id)s::VARCHAR AND val_city_1.id = val_city_0.customer_id AND val_city_1.tenant_id = %(tenant_id)s::VARCHAR 
 LIMIT %(one_row)s::INTEGER) AS "v_order.customer.city", count(*) OVER () AS q_total 
FROM order_lines 
WHERE order_lines.tenant_id = %(tenant_id)s::VARCHAR ORDER BY order_lines.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"limit": 21, "one_row": 1, "tenant_id": "nordwind"}

-- role: baseline
SELECT count(*) AS n 
FROM order_lines 
WHERE order_lines.tenant_id = %(tenant_id)s::VARCHAR
-- params: {"tenant_id": "nordwind"}
