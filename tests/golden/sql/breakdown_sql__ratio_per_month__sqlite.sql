-- template: payment.breakdown
-- dialect: sqlite

-- role: main
SELECT breakdown_members.breakdown_key_0, sum(breakdown_members.breakdown_measure_amount) AS breakdown_part_0, count(DISTINCT breakdown_members.breakdown_measure_order_id) AS breakdown_part_1, count(*) AS breakdown_rows, count(*) OVER () AS breakdown_groups, CAST(? AS INTEGER) AS breakdown_probe 
FROM (SELECT qdsl_period(payments.paid_at, ?, ?, ?) AS breakdown_key_0, payments.amount AS breakdown_measure_amount, payments.order_id AS breakdown_measure_order_id, payments.tenant_id AS row_tenant, payments.id AS row_id, payments.reference AS row_label, payments.id AS breakdown_order 
FROM payments 
WHERE payments.tenant_id = ?) AS breakdown_members GROUP BY breakdown_members.breakdown_key_0 ORDER BY CAST(sum(breakdown_members.breakdown_measure_amount) AS FLOAT) / (nullif(count(DISTINCT breakdown_members.breakdown_measure_order_id), ?) + 0.0) DESC NULLS LAST, breakdown_members.breakdown_key_0 ASC NULLS LAST
 LIMIT ? OFFSET ?
-- params: {"limit": 21, "tenant_id": "nordwind"}

-- role: rows
SELECT breakdown_ranked.breakdown_key_0, breakdown_ranked.row_tenant, breakdown_ranked.row_id, breakdown_ranked.row_label, breakdown_ranked.breakdown_measure_amount, breakdown_ranked.breakdown_measure_order_id 
FROM (SELECT breakdown_members.breakdown_key_0 AS breakdown_key_0, breakdown_members.row_tenant AS row_tenant, breakdown_members.row_id AS row_id, breakdown_members.row_label AS row_label, breakdown_members.breakdown_measure_amount AS breakdown_measure_amount, breakdown_members.breakdown_measure_order_id AS breakdown_measure_order_id, row_number() OVER (PARTITION BY breakdown_members.breakdown_key_0 ORDER BY breakdown_members.breakdown_order ASC) AS breakdown_rank 
FROM (SELECT qdsl_period(payments.paid_at, ?, ?, ?) AS breakdown_key_0, payments.amount AS breakdown_measure_amount, payments.order_id AS breakdown_measure_order_id, payments.tenant_id AS row_tenant, payments.id AS row_id, payments.reference AS row_label, payments.id AS breakdown_order 
FROM payments 
WHERE payments.tenant_id = ?) AS breakdown_members) AS breakdown_ranked JOIN (SELECT breakdown_members.breakdown_key_0 AS breakdown_key_0, sum(breakdown_members.breakdown_measure_amount) AS breakdown_part_0, count(DISTINCT breakdown_members.breakdown_measure_order_id) AS breakdown_part_1, count(*) AS breakdown_rows, count(*) OVER () AS breakdown_groups, CAST(? AS INTEGER) AS breakdown_probe 
FROM (SELECT qdsl_period(payments.paid_at, ?, ?, ?) AS breakdown_key_0, payments.amount AS breakdown_measure_amount, payments.order_id AS breakdown_measure_order_id, payments.tenant_id AS row_tenant, payments.id AS row_id, payments.reference AS row_label, payments.id AS breakdown_order 
FROM payments 
WHERE payments.tenant_id = ?) AS breakdown_members GROUP BY breakdown_members.breakdown_key_0 ORDER BY CAST(sum(breakdown_members.breakdown_measure_amount) AS FLOAT) / (nullif(count(DISTINCT breakdown_members.breakdown_measure_order_id), ?) + 0.0) DESC NULLS LAST, breakdown_members.breakdown_key_0 ASC NULLS LAST
 LIMIT ? OFFSET ?) AS breakdown_top ON breakdown_ranked.breakdown_key_0 IS breakdown_top.breakdown_key_0 
WHERE breakdown_ranked.breakdown_rank <= ? ORDER BY breakdown_ranked.row_id
-- params: {"limit": 21, "tenant_id": "nordwind"}

-- role: basis
SELECT sum(breakdown_members.breakdown_measure_amount) AS breakdown_total_part_0, count(DISTINCT breakdown_members.breakdown_measure_order_id) AS breakdown_total_part_1, sum(CASE WHEN (breakdown_shown_groups.breakdown_shown IS NULL) THEN breakdown_members.breakdown_measure_amount END) AS breakdown_rest_part_0, count(DISTINCT CASE WHEN (breakdown_shown_groups.breakdown_shown IS NULL) THEN breakdown_members.breakdown_measure_order_id END) AS breakdown_rest_part_1, count(*) AS breakdown_all_rows 
FROM (SELECT qdsl_period(payments.paid_at, ?, ?, ?) AS breakdown_key_0, payments.amount AS breakdown_measure_amount, payments.order_id AS breakdown_measure_order_id, payments.tenant_id AS row_tenant, payments.id AS row_id, payments.reference AS row_label, payments.id AS breakdown_order 
FROM payments 
WHERE payments.tenant_id = ?) AS breakdown_members LEFT OUTER JOIN (SELECT breakdown_shown.breakdown_key_0 AS breakdown_key_0, ? AS breakdown_shown 
FROM (SELECT breakdown_members.breakdown_key_0 AS breakdown_key_0, sum(breakdown_members.breakdown_measure_amount) AS breakdown_part_0, count(DISTINCT breakdown_members.breakdown_measure_order_id) AS breakdown_part_1, count(*) AS breakdown_rows, count(*) OVER () AS breakdown_groups, CAST(? AS INTEGER) AS breakdown_probe 
FROM (SELECT qdsl_period(payments.paid_at, ?, ?, ?) AS breakdown_key_0, payments.amount AS breakdown_measure_amount, payments.order_id AS breakdown_measure_order_id, payments.tenant_id AS row_tenant, payments.id AS row_id, payments.reference AS row_label, payments.id AS breakdown_order 
FROM payments 
WHERE payments.tenant_id = ?) AS breakdown_members GROUP BY breakdown_members.breakdown_key_0 ORDER BY CAST(sum(breakdown_members.breakdown_measure_amount) AS FLOAT) / (nullif(count(DISTINCT breakdown_members.breakdown_measure_order_id), ?) + 0.0) DESC NULLS LAST, breakdown_members.breakdown_key_0 ASC NULLS LAST
 LIMIT ? - ? OFFSET ?) AS breakdown_shown) AS breakdown_shown_groups ON breakdown_members.breakdown_key_0 IS breakdown_shown_groups.breakdown_key_0
-- params: {"limit": 21, "tenant_id": "nordwind"}
