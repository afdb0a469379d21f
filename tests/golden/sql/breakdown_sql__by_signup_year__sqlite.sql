-- template: order.breakdown
-- dialect: sqlite

-- role: main
SELECT breakdown_members.breakdown_key_0, count(*) AS breakdown_value, sum(count(*)) OVER () AS breakdown_total, count(*) OVER () AS breakdown_groups, CAST(? AS INTEGER) AS breakdown_probe 
FROM (SELECT qdsl_period((SELECT val_signed_up_0.signed_up 
FROM customers AS val_signed_up_0 
WHERE val_signed_up_0.id = orders.customer_id AND val_signed_up_0.tenant_id = ?
 LIMIT ? OFFSET ?), ?, ?, ?) AS breakdown_key_0, orders.tenant_id AS row_tenant, orders.id AS row_id, orders.number AS row_label, orders.id AS breakdown_order 
FROM orders 
WHERE orders.tenant_id = ?) AS breakdown_members GROUP BY breakdown_members.breakdown_key_0 ORDER BY count(*) DESC, breakdown_members.breakdown_key_0 ASC NULLS LAST
 LIMIT ? OFFSET ?
-- params: {"limit": 21, "one_row": 1, "tenant_id": "nordwind"}

-- role: rows
SELECT breakdown_ranked.breakdown_key_0, breakdown_ranked.row_tenant, breakdown_ranked.row_id, breakdown_ranked.row_label 
FROM (SELECT breakdown_members.breakdown_key_0 AS breakdown_key_0, breakdown_members.row_tenant AS row_tenant, breakdown_members.row_id AS row_id, breakdown_members.row_label AS row_label, row_number() OVER (PARTITION BY breakdown_members.breakdown_key_0 ORDER BY breakdown_members.breakdown_order ASC) AS breakdown_rank 
FROM (SELECT qdsl_period((SELECT val_signed_up_0.signed_up 
FROM customers AS val_signed_up_0 
WHERE val_signed_up_0.id = orders.customer_id AND val_signed_up_0.tenant_id = ?
 LIMIT ? OFFSET ?), ?, ?, ?) AS breakdown_key_0, orders.tenant_id AS row_tenant, orders.id AS row_id, orders.number AS row_label, orders.id AS breakdown_order 
FROM orders 
WHERE orders.tenant_id = ?) AS breakdown_members) AS breakdown_ranked JOIN (SELECT breakdown_members.breakdown_key_0 AS breakdown_key_0, count(*) AS breakdown_value, sum(count(*)) OVER () AS breakdown_total, count(*) OVER () AS breakdown_groups, CAST(? AS INTEGER) AS breakdown_probe 
FROM (SELECT qdsl_period((SELECT val_signed_up_0.signed_up 
FROM customers AS val_signed_up_0 
WHERE val_signed_up_0.id = orders.customer_id AND val_signed_up_0.tenant_id = ?
 LIMIT ? OFFSET ?), ?, ?, ?) AS breakdown_key_0, orders.tenant_id AS row_tenant, orders.id AS row_id, orders.number AS row_label, orders.id AS breakdown_order 
FROM orders 
WHERE orders.tenant_id = ?) AS breakdown_members GROUP BY breakdown_members.breakdown_key_0 ORDER BY count(*) DESC, breakdown_members.breakdown_key_0 ASC NULLS LAST
 LIMIT ? OFFSET ?) AS breakdown_top ON breakdown_ranked.breakdown_key_0 IS breakdown_top.breakdown_key_0 
WHERE breakdown_ranked.breakdown_rank <= ? ORDER BY breakdown_ranked.row_id
-- params: {"limit": 21, "one_row": 1, "tenant_id": "nordwind"}
