-- template: payment.breakdown
-- dialect: postgresql

-- role: main
SELECT breakdown_members.breakdown_key_0, sum(breakdown_members.breakdown_measure_amount) AS breakdown_part_0, count(*) AS breakdown_rows, count(*) OVER () AS breakdown_groups, CAST(%(limit)s::INTEGER AS INTEGER) AS breakdown_probe 
FROM (SELECT payments.method AS breakdown_key_0, payments.amount AS breakdown_measure_amount, payments.tenant_id AS row_tenant, payments.id AS row_id, payments.reference AS row_label, payments.id AS breakdown_order 
FROM payments 
WHERE payments.tenant_id = %(tenant_id)s::VARCHAR AND payments.refunded = %(f0)s) AS breakdown_members GROUP BY breakdown_members.breakdown_key_0 ORDER BY sum(breakdown_members.breakdown_measure_amount) DESC NULLS LAST, breakdown_members.breakdown_key_0 COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"f0": false, "limit": 21, "tenant_id": "nordwind"}

-- role: rows
SELECT breakdown_ranked.breakdown_key_0, breakdown_ranked.row_tenant, breakdown_ranked.row_id, breakdown_ranked.row_label, breakdown_ranked.breakdown_measure_amount 
FROM (SELECT breakdown_members.breakdown_key_0 AS breakdown_key_0, breakdown_members.row_tenant AS row_tenant, breakdown_members.row_id AS row_id, breakdown_members.row_label AS row_label, breakdown_members.breakdown_measure_amount AS breakdown_measure_amount, row_number() OVER (PARTITION BY breakdown_members.breakdown_key_0 ORDER BY breakdown_members.breakdown_order COLLATE "C" ASC) AS breakdown_rank 
FROM (SELECT payments.method AS breakdown_key_0, payments.amount AS breakdown_measure_amount, payments.tenant_id AS row_tenant, payments.id AS row_id, payments.reference AS row_label, payments.id AS breakdown_order 
FROM payments 
WHERE payments.tenant_id = %(tenant_id)s::VARCHAR AND payments.refunded = %(f0)s) AS breakdown_members) AS breakdown_ranked JOIN (SELECT breakdown_members.breakdown_key_0 AS breakdown_key_0, sum(breakdown_members.breakdown_measure_amount) AS breakdown_part_0, count(*) AS breakdown_rows, count(*) OVER () AS breakdown_groups, CAST(%(limit)s::INTEGER AS INTEGER) AS breakdown_probe 
FROM (SELECT payments.method AS breakdown_key_0, payments.amount AS breakdown_measure_amount, payments.tenant_id AS row_tenant, payments.id AS row_id, payments.reference AS row_label, payments.id AS breakdown_order 
FROM payments 
WHERE payments.tenant_id = %(tenant_id)s::VARCHAR AND payments.refunded = %(f0)s) AS breakdown_members GROUP BY breakdown_members.breakdown_key_0 ORDER BY sum(breakdown_members.breakdown_measure_amount) DESC NULLS LAST, breakdown_members.breakdown_key_0 COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER) AS breakdown_top ON breakdown_ranked.breakdown_key_0 IS NOT DISTINCT FROM breakdown_top.breakdown_key_0 
WHERE breakdown_ranked.breakdown_rank <= %(breakdown_rank_1)s::INTEGER ORDER BY breakdown_ranked.row_id
-- params: {"f0": false, "limit": 21, "tenant_id": "nordwind"}

-- role: basis
SELECT sum(breakdown_members.breakdown_measure_amount) AS breakdown_total_part_0, sum(CASE WHEN (breakdown_shown_groups.breakdown_shown IS NULL) THEN breakdown_members.breakdown_measure_amount END) AS breakdown_rest_part_0, count(*) AS breakdown_all_rows 
FROM (SELECT payments.method AS breakdown_key_0, payments.amount AS breakdown_measure_amount, payments.tenant_id AS row_tenant, payments.id AS row_id, payments.reference AS row_label, payments.id AS breakdown_order 
FROM payments 
WHERE payments.tenant_id = %(tenant_id)s::VARCHAR AND payments.refunded = %(f0)s) AS breakdown_members LEFT OUTER JOIN (SELECT breakdown_shown.breakdown_key_0 AS breakdown_key_0, %(param_1)s::INTEGER AS breakdown_shown 
FROM (SELECT breakdown_members.breakdown_key_0 AS breakdown_key_0, sum(breakdown_members.breakdown_measure_amount) AS breakdown_part_0, count(*) AS breakdown_rows, count(*) OVER () AS breakdown_groups, CAST(%(limit)s::INTEGER AS INTEGER) AS breakdown_probe 
FROM (SELECT payments.method AS breakdown_key_0, payments.amount AS breakdown_measure_amount, payments.tenant_id AS row_tenant, payments.id AS row_id, payments.reference AS row_label, payments.id AS breakdown_order 
FROM payments 
WHERE payments.tenant_id = %(tenant_id)s::VARCHAR AND payments.refunded = %(f0)s) AS breakdown_members GROUP BY breakdown_members.breakdown_key_0 ORDER BY sum(breakdown_members.breakdown_measure_amount) DESC NULLS LAST, breakdown_members.breakdown_key_0 COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER - %(param_2)s::INTEGER) AS breakdown_shown) AS breakdown_shown_groups ON breakdown_members.breakdown_key_0 IS NOT DISTINCT FROM breakdown_shown_groups.breakdown_key_0
-- params: {"f0": false, "limit": 21, "tenant_id": "nordwind"}
