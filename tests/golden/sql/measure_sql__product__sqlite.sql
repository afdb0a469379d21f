-- template: order_line.aggregate
-- dialect: sqlite

-- role: main
SELECT sum(order_lines.quantity * order_lines.unit_price) AS aggregate_value, count(order_lines.quantity * order_lines.unit_price) AS aggregate_values, count(*) AS aggregate_rows, CAST(? AS INTEGER) AS aggregate_probe 
FROM order_lines 
WHERE order_lines.tenant_id = ? AND order_lines.quantity >= ?
-- params: {"f0": 2.0, "limit": 21, "tenant_id": "nordwind"}

-- role: rows
SELECT order_lines.tenant_id AS row_tenant, order_lines.id AS row_id, order_lines.title AS row_label, order_lines.quantity * order_lines.unit_price AS aggregate_cited, order_lines.quantity AS aggregate_cited_quantity, order_lines.unit_price AS aggregate_cited_unit_price 
FROM order_lines 
WHERE order_lines.tenant_id = ? AND order_lines.quantity >= ? AND order_lines.quantity * order_lines.unit_price IS NOT NULL ORDER BY order_lines.id ASC NULLS LAST
 LIMIT ? OFFSET ?
-- params: {"f0": 2.0, "limit": 21, "tenant_id": "nordwind"}
