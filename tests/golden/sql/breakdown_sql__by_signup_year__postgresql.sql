-- template: order.breakdown
-- dialect: postgresql

-- role: main
SELECT breakdown_members.breakdown_key_0, count(*) AS breakdown_value, sum(count(*)) OVER () AS breakdown_total, count(*) OVER () AS breakdown_groups, CAST(%(limit)s::INTEGER AS INTEGER) AS breakdown_probe 
FROM (SELECT CAST(date_trunc(%(param_1)s::VARCHAR, CAST(CAST((SELECT val_signed_up_0.signed_up 
FROM customers AS val_signed_up_0 
WHERE val_signed_up_0.id = orders.customer_id AND val_signed_up_0.tenant_id = %(tenant_id)s::VARCHAR 
 LIMIT %(one_row)s::INTEGER) AS DATE) AS TIMESTAMP WITHOUT TIME ZONE)) AS DATE) AS breakdown_key_0, orders.tenant_id AS row_tenant, orders.id AS row_id, orders.number AS row_label, orders.id AS breakdown_order 
FROM orders 
WHERE orders.tenant_id = %(tenant_id)s::VARCHAR) AS breakdown_members GROUP BY breakdown_members.breakdown_key_0 ORDER BY count(*) DESC, breakdown_members.breakdown_key_0 ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"limit": 21, "one_row": 1, "tenant_id": "nordwind"}

-- role: rows
SELECT breakdown_ranked.breakdown_key_0, breakdown_ranked.row_tenant, breakdown_ranked.row_id, breakdown_ranked.row_label 
FROM (SELECT breakdown_members.breakdown_key_0 AS breakdown_key_0, breakdown_members.row_tenant AS row_tenant, breakdown_members.row_id AS row_id, breakdown_members.row_label AS row_label, row_number() OVER (PARTITION BY breakdown_members.breakdown_key_0 ORDER BY breakdown_members.breakdown_order COLLATE "C" ASC) AS breakdown_rank 
FROM (SELECT CAST(date_trunc(%(param_1)s::VARCHAR, CAST(CAST((SELECT val_signed_up_0.signed_up 
FROM customers AS val_signed_up_0 
WHERE val_signed_up_0.id = orders.customer_id AND val_signed_up_0.tenant_id = %(tenant_id)s::VARCHAR 
 LIMIT %(one_row)s::INTEGER) AS DATE) AS TIMESTAMP WITHOUT TIME ZONE)) AS DATE) AS breakdown_key_0, orders.tenant_id AS row_tenant, orders.id AS row_id, orders.number AS row_label, orders.id AS breakdown_order 
FROM orders 
WHERE orders.tenant_id = %(tenant_id)s::VARCHAR) AS breakdown_members) AS breakdown_ranked JOIN (SELECT breakdown_members.breakdown_key_0 AS breakdown_key_0, count(*) AS breakdown_value, sum(count(*)) OVER () AS breakdown_total, count(*) OVER () AS breakdown_groups, CAST(%(limit)s::INTEGER AS INTEGER) AS breakdown_probe 
FROM (SELECT CAST(date_trunc(%(param_1)s::VARCHAR, CAST(CAST((SELECT val_signed_up_0.signed_up 
FROM customers AS val_signed_up_0 
WHERE val_signed_up_0.id = orders.customer_id AND val_signed_up_0.tenant_id = %(tenant_id)s::VARCHAR 
 LIMIT %(one_row)s::INTEGER) AS DATE) AS TIMESTAMP WITHOUT TIME ZONE)) AS DATE) AS breakdown_key_0, orders.tenant_id AS row_tenant, orders.id AS row_id, orders.number AS row_label, orders.id AS breakdown_order 
FROM orders 
WHERE orders.tenant_id = %(tenant_id)s::VARCHAR) AS breakdown_members GROUP BY breakdown_members.breakdown_key_0 ORDER BY count(*) DESC, breakdown_members.breakdown_key_0 ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER) AS breakdown_top ON breakdown_ranked.breakdown_key_0 IS NOT DISTINCT FROM breakdown_top.breakdown_key_0 
WHERE breakdown_ranked.breakdown_rank <= %(breakdown_rank_1)s::INTEGER ORDER BY breakdown_ranked.row_id
-- params: {"limit": 21, "one_row": 1, "tenant_id": "nordwind"}
