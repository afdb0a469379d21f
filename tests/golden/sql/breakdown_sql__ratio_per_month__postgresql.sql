-- template: payment.breakdown
-- dialect: postgresql

-- role: main
SELECT breakdown_members.breakdown_key_0, sum(breakdown_members.breakdown_measure_amount) AS breakdown_part_0, count(DISTINCT breakdown_members.breakdown_measure_order_id) AS breakdown_part_1, count(*) AS breakdown_rows, count(*) OVER () AS breakdown_groups, CAST(%(limit)s::INTEGER AS INTEGER) AS breakdown_probe 
FROM (SELECT CAST(date_trunc(%(param_1)s::VARCHAR, timezone(%(param_2)s::VARCHAR, CAST(payments.paid_at AS TIMESTAMP WITH TIME ZONE))) AS DATE) AS breakdown_key_0, payments.amount AS breakdown_measure_amount, payments.order_id AS breakdown_measure_order_id, payments.tenant_id AS row_tenant, payments.id AS row_id, payments.reference AS row_label, payments.id AS breakdown_order 
FROM payments 
WHERE payments.tenant_id = %(tenant_id)s::VARCHAR) AS breakdown_members GROUP BY breakdown_members.breakdown_key_0 ORDER BY CAST(sum(breakdown_members.breakdown_measure_amount) AS FLOAT) / CAST(nullif(count(DISTINCT breakdown_members.breakdown_measure_order_id), %(nullif_1)s::INTEGER) AS NUMERIC) DESC NULLS LAST, breakdown_members.breakdown_key_0 ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"limit": 21, "tenant_id": "nordwind"}

-- role: rows
SELECT breakdown_ranked.breakdown_key_0, breakdown_ranked.row_tenant, breakdown_ranked.row_id, breakdown_ranked.row_label, breakdown_ranked.breakdown_measure_amount, breakdown_ranked.breakdown_measure_order_id 
FROM (SELECT breakdown_members.breakdown_key_0 AS breakdown_key_0, breakdown_members.row_tenant AS row_tenant, breakdown_members.row_id AS row_id, breakdown_members.row_label AS row_label, breakdown_members.breakdown_measure_amount AS breakdown_measure_amount, breakdown_members.breakdown_measure_order_id AS breakdown_measure_order_id, row_number() OVER (PARTITION BY breakdown_members.breakdown_key_0 ORDER BY breakdown_members.breakdown_order COLLATE "C" ASC) AS breakdown_rank 
FROM (SELECT CAST(date_trunc(%(param_1)s::VARCHAR, timezone(%(param_2)s::VARCHAR, CAST(payments.paid_at AS TIMESTAMP WITH TIME ZONE))) AS DATE) AS breakdown_key_0, payments.amount AS breakdown_measure_amount, payments.order_id AS breakdown_measure_order_id, payments.tenant_id AS row_tenant, payments.id AS row_id, payments.reference AS row_label, payments.id AS breakdown_order 
FROM payments 
WHERE payments.tenant_id = %(tenant_id)s::VARCHAR) AS breakdown_members) AS breakdown_ranked JOIN (SELECT breakdown_members.breakdown_key_0 AS breakdown_key_0, sum(breakdown_members.breakdown_measure_amount) AS breakdown_part_0, count(DISTINCT breakdown_members.breakdown_measure_order_id) AS breakdown_part_1, count(*) AS breakdown_rows, count(*) OVER () AS breakdown_groups, CAST(%(limit)s::INTEGER AS INTEGER) AS breakdown_probe 
FROM (SELECT CAST(date_trunc(%(param_1)s::VARCHAR, timezone(%(param_2)s::VARCHAR, CAST(payments.paid_at AS TIMESTAMP WITH TIME ZONE))) AS DATE) AS breakdown_key_0, payments.amount AS breakdown_measure_amount, payments.order_id AS breakdown_measure_order_id, payments.tenant_id AS row_tenant, payments.id AS row_id, payments.reference AS row_label, payments.id AS breakdown_order 
FROM payments 
WHERE payments.tenant_id = %(tenant_id)s::VARCHAR) AS breakdown_members GROUP BY breakdown_members.breakdown_key_0 ORDER BY CAST(sum(breakdown_members.breakdown_measure_amount) AS FLOAT) / CAST(nullif(count(DISTINCT breakdown_members.breakdown_measure_order_id), %(nullif_1)s::INTEGER) AS NUMERIC) DESC NULLS LAST, breakdown_members.breakdown_key_0 ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER) AS breakdown_top ON breakdown_ranked.breakdown_key_0 IS NOT DISTINCT FROM breakdown_top.breakdown_key_0 
WHERE breakdown_ranked.breakdown_rank <= %(breakdown_rank_1)s::INTEGER ORDER BY breakdown_ranked.row_id
-- params: {"limit": 21, "tenant_id": "nordwind"}

-- role: basis
SELECT sum(breakdown_members.breakdown_measure_amount) AS breakdown_total_part_0, count(DISTINCT breakdown_members.breakdown_measure_order_id) AS breakdown_total_part_1, sum(CASE WHEN (breakdown_shown_groups.breakdown_shown IS NULL) THEN breakdown_members.breakdown_measure_amount END) AS breakdown_rest_part_0, count(DISTINCT CASE WHEN (breakdown_shown_groups.breakdown_shown IS NULL) THEN breakdown_members.breakdown_measure_order_id END) AS breakdown_rest_part_1, count(*) AS breakdown_all_rows 
FROM (SELECT CAST(date_trunc(%(param_1)s::VARCHAR, timezone(%(param_2)s::VARCHAR, CAST(payments.paid_at AS TIMESTAMP WITH TIME ZONE))) AS DATE) AS breakdown_key_0, payments.amount AS breakdown_measure_amount, payments.order_id AS breakdown_measure_order_id, payments.tenant_id AS row_tenant, payments.id AS row_id, payments.reference AS row_label, payments.id AS breakdown_order 
FROM payments 
WHERE payments.tenant_id = %(tenant_id)s::VARCHAR) AS breakdown_members LEFT OUTER JOIN (SELECT breakdown_shown.breakdown_key_0 AS breakdown_key_0, %(param_3)s::INTEGER AS breakdown_shown 
FROM (SELECT breakdown_members.breakdown_key_0 AS breakdown_key_0, sum(breakdown_members.breakdown_measure_amount) AS breakdown_part_0, count(DISTINCT breakdown_members.breakdown_measure_order_id) AS breakdown_part_1, count(*) AS breakdown_rows, count(*) OVER () AS breakdown_groups, CAST(%(limit)s::INTEGER AS INTEGER) AS breakdown_probe 
FROM (SELECT CAST(date_trunc(%(param_1)s::VARCHAR, timezone(%(param_2)s::VARCHAR, CAST(payments.paid_at AS TIMESTAMP WITH TIME ZONE))) AS DATE) AS breakdown_key_0, payments.amount AS breakdown_measure_amount, payments.order_id AS breakdown_measure_order_id, payments.tenant_id AS row_tenant, payments.id AS row_id, payments.reference AS row_label, payments.id AS breakdown_order 
FROM payments 
WHERE payments.tenant_id = %(tenant_id)s::VARCHAR) AS breakdown_members GROUP BY breakdown_members.breakdown_key_0 ORDER BY CAST(sum(breakdown_members.breakdown_measure_amount) AS FLOAT) / CAST(nullif(count(DISTINCT breakdown_members.breakdown_measure_order_id), %(nullif_1)s::INTEGER) AS NUMERIC) DESC NULLS LAST, breakdown_members.breakdown_key_0 ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER - %(param_4)s::INTEGER) AS breakdown_shown) AS breakdown_shown_groups ON breakdown_members.breakdown_key_0 IS NOT DISTINCT FROM breakdown_shown_groups.breakdown_key_0
-- params: {"limit": 21, "tenant_id": "nordwind"}
