-- template: order_line.aggregate
-- dialect: postgresql

-- role: main
SELECT sum(order_lines.quantity * order_lines.unit_price) AS aggregate_value, count(order_lines.quantity * order_lines.unit_price) AS aggregate_values, count(*) AS aggregate_rows, CAST(%(limit)s::INTEGER AS INTEGER) AS aggregate_probe 
FROM order_lines 
WHERE order_lines.tenant_id = %(tenant_id)s::VARCHAR AND order_lines.quantity >= %(f0)s
-- params: {"f0": 2.0, "limit": 21, "tenant_id": "nordwind"}

-- role: rows
SELECT order_lines.tenant_id AS row_tenant, order_lines.id AS row_id, order_lines.title AS row_label, order_lines.quantity * order_lines.unit_price AS aggregate_cited, order_lines.quantity AS aggregate_cited_quantity, order_lines.unit_price AS aggregate_cited_unit_price 
FROM order_lines 
WHERE order_lines.tenant_id = %(tenant_id)s::VARCHAR AND order_lines.quantity >= %(f0)s AND order_lines.quantity * order_lines.unit_price IS NOT NULL ORDER BY order_lines.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"f0": 2.0, "limit": 21, "tenant_id": "nordwind"}
