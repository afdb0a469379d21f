-- template: order_line.breakdown
-- dialect: postgresql

-- role: main
SELECT breakdown_members.breakdown_key_0, min(breakdown_members.breakdown_label_0) AS breakdown_label_0, sum(breakdown_members.breakdown_measure_quantity * breakdown_members.breakdown_measure_unit_price) AS breakdown_part_0, count(*) AS breakdown_rows, count(*) OVER () AS breakdown_groups, CAST(%(limit)s::INTEGER AS INTEGER) AS breakdown_probe 
FROM (SELECT (SELECT val_id_0.id 
FROM products AS val_id_0 
WHERE val_id_0.id = order_lines.product_id AND val_id_0.tenant_id = %(tenant_id)s::VARCHAR 
 LIMIT %(one_row)s::INTEGER) AS breakdown_key_0, (SELECT val_name_0.name 
FROM products AS val_name_0 
WHERE val_name_0.id = order_lines.product_id AND val_name_0.tenant_id = %(tenant_id)s::VARCHAR 
 LIMIT %(one_row)s::INTEGER) AS breakdown_label_0, order_lines.quantity AS breakdown_measure_quantity, order_lines.unit_price AS breakdown_measure_unit_price, order_lines.quantity * order_lines.unit_price AS breakdown_product, order_lines.tenant_id AS row_tenant, order_lines.id AS row_id, order_lines.title AS row_label, order_lines.id AS breakdown_order 
FROM order_lines 
WHERE order_lines.tenant_id = %(tenant_id)s::VARCHAR) AS breakdown_members GROUP BY breakdown_members.breakdown_key_0 ORDER BY sum(breakdown_members.breakdown_measure_quantity * breakdown_members.breakdown_measure_unit_price) DESC NULLS LAST, breakdown_members.breakdown_key_0 COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"limit": 6, "one_row": 1, "tenant_id": "nordwind"}

-- role: rows
SELECT breakdown_ranked.breakdown_key_0, breakdown_ranked.row_tenant, breakdown_ranked.row_id, breakdown_ranked.row_label, breakdown_ranked.breakdown_measure_quantity, breakdown_ranked.breakdown_measure_unit_price, breakdown_ranked.breakdown_product 
FROM (SELECT breakdown_members.breakdown_key_0 AS breakdown_key_0, breakdown_members.row_tenant AS row_tenant, breakdown_members.row_id AS row_id, breakdown_members.row_label AS row_label, breakdown_members.breakdown_measure_quantity AS breakdown_measure_quantity, breakdown_members.breakdown_measure_unit_price AS breakdown_measure_unit_price, breakdown_members.breakdown_product AS breakdown_product, row_number() OVER (PARTITION BY breakdown_members.breakdown_key_0 ORDER BY breakdown_members.breakdown_order COLLATE "C" ASC) AS breakdown_rank 
FROM (SELECT (SELECT val_id_0.id 
FROM products AS val_id_0 
WHERE val_id_0.id = order_lines.product_id AND val_id_0.tenant_id = %(tenant_id)s::VARCHAR 
 LIMIT %(one_row)s::INTEGER) AS breakdown_key_0, (SELECT val_name_0.name 
FROM products AS val_name_0 
WHERE val_name_0.id = order_lines.product_id AND val_name_0.tenant_id = %(tenant_id)s::VARCHAR 
 LIMIT %(one_row)s::INTEGER) AS breakdown_label_0, order_lines.quantity AS breakdown_measure_quantity, order_lines.unit_price AS breakdown_measure_unit_price, order_lines.quantity * order_lines.unit_price AS breakdown_product, order_lines.tenant_id AS row_tenant, order_lines.id AS row_id, order_lines.title AS row_label, order_lines.id AS breakdown_order 
FROM order_lines 
WHERE order_lines.tenant_id = %(tenant_id)s::VARCHAR) AS breakdown_members) AS breakdown_ranked JOIN (SELECT breakdown_members.breakdown_key_0 AS breakdown_key_0, min(breakdown_members.breakdown_label_0) AS breakdown_label_0, sum(breakdown_members.breakdown_measure_quantity * breakdown_members.breakdown_measure_unit_price) AS breakdown_part_0, count(*) AS breakdown_rows, count(*) OVER () AS breakdown_groups, CAST(%(limit)s::INTEGER AS INTEGER) AS breakdown_probe 
FROM (SELECT (SELECT val_id_0.id 
FROM products AS val_id_0 
WHERE val_id_0.id = order_lines.product_id AND val_id_0.tenant_id = %(tenant_id)s::VARCHAR 
 LIMIT %(one_row)s::INTEGER) AS breakdown_key_0, (SELECT val_name_0.name 
FROM products AS val_name_0 
WHERE val_name_0.id = order_lines.product_id AND val_name_0.tenant_id = %(tenant_id)s::VARCHAR 
 LIMIT %(one_row)s::INTEGER) AS breakdown_label_0, order_lines.quantity AS breakdown_measure_quantity, order_lines.unit_price AS breakdown_measure_unit_price, order_lines.quantity * order_lines.unit_price AS breakdown_product, order_lines.tenant_id AS row_tenant, order_lines.id AS row_id, order_lines.title AS row_label, order_lines.id AS breakdown_order 
FROM order_lines 
WHERE order_lines.tenant_id = %(tenant_id)s::VARCHAR) AS breakdown_members GROUP BY breakdown_members.breakdown_key_0 ORDER BY sum(breakdown_members.breakdown_measure_quantity * breakdown_members.breakdown_measure_unit_price) DESC NULLS LAST, breakdown_members.breakdown_key_0 COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER) AS breakdown_top ON breakdown_ranked.breakdown_key_0 IS NOT DISTINCT FROM breakdown_top.breakdown_key_0 
WHERE breakdown_ranked.breakdown_rank <= %(breakdown_rank_1)s::INTEGER ORDER BY breakdown_ranked.row_id
-- params: {"limit": 6, "one_row": 1, "tenant_id": "nordwind"}

-- role: basis
SELECT sum(breakdown_members.breakdown_measure_quantity * breakdown_members.breakdown_measure_unit_price) AS breakdown_total_part_0, sum(CASE WHEN (breakdown_shown_groups.breakdown_shown IS NULL) THEN breakdown_members.breakdown_measure_quantity * breakdown_members.breakdown_measure_unit_price END) AS breakdown_rest_part_0, count(*) AS breakdown_all_rows 
FROM (SELECT (SELECT val_id_0.id 
FROM products AS val_id_0 
WHERE val_id_0.id = order_lines.product_id AND val_id_0.tenant_id = %(tenant_id)s::VARCHAR 
 LIMIT %(one_row)s::INTEGER) AS breakdown_key_0, (SELECT val_name_0.name 
FROM products AS val_name_0 
WHERE val_name_0.id = order_lines.product_id AND val_name_0.tenant_id = %(tenant_id)s::VARCHAR 
 LIMIT %(one_row)s::INTEGER) AS breakdown_label_0, order_lines.quantity AS breakdown_measure_quantity, order_lines.unit_price AS breakdown_measure_unit_price, order_lines.quantity * order_lines.unit_price AS breakdown_product, order_lines.tenant_id AS row_tenant, order_lines.id AS row_id, order_lines.title AS row_label, order_lines.id AS breakdown_order 
FROM order_lines 
WHERE order_lines.tenant_id = %(tenant_id)s::VARCHAR) AS breakdown_members LEFT OUTER JOIN (SELECT breakdown_shown.breakdown_key_0 AS breakdown_key_0, %(param_1)s::INTEGER AS breakdown_shown 
FROM (SELECT breakdown_members.breakdown_key_0 AS breakdown_key_0, min(breakdown_members.breakdown_label_0) AS breakdown_label_0, sum(breakdown_members.breakdown_measure_quantity * breakdown_members.breakdown_measure_unit_price) AS breakdown_part_0, count(*) AS breakdown_rows, count(*) OVER () AS breakdown_groups, CAST(%(limit)s::INTEGER AS INTEGER) AS breakdown_probe 
FROM (SELECT (SELECT val_id_0.id 
FROM products AS val_id_0 
WHERE val_id_0.id = order_lines.product_id AND val_id_0.tenant_id = %(tenant_id)s::VARCHAR 
 LIMIT %(one_row)s::INTEGER) AS breakdown_key_0, (SELECT val_name_0.name 
FROM products AS val_name_0 
WHERE val_name_0.id = order_lines.product_id AND val_name_0.tenant_id = %(tenant_id)s::VARCHAR 
 LIMIT %(one_row)s::INTEGER) AS breakdown_label_0, order_lines.quantity AS breakdown_measure_quantity, order_lines.unit_price AS breakdown_measure_unit_price, order_lines.quantity * order_lines.unit_price AS breakdown_product, order_lines.tenant_id AS row_tenant, order_lines.id AS row_id, order_lines.title AS row_label, order_lines.id AS breakdown_order 
FROM order_lines 
WHERE order_lines.tenant_id = %(tenant_id)s::VARCHAR) AS breakdown_members GROUP BY breakdown_members.breakdown_key_0 ORDER BY sum(breakdown_members.breakdown_measure_quantity * breakdown_members.breakdown_measure_unit_price) DESC NULLS LAST, breakdown_members.breakdown_key_0 COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER - %(param_2)s::INTEGER) AS breakdown_shown) AS breakdown_shown_groups ON breakdown_members.breakdown_key_0 IS NOT DISTINCT FROM breakdown_shown_groups.breakdown_key_0
-- params: {"limit": 6, "one_row": 1, "tenant_id": "nordwind"}
