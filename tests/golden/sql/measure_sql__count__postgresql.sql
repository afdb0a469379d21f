-- template: payment.aggregate
-- dialect: postgresql

-- role: main
SELECT count(*) AS aggregate_value, count(*) AS aggregate_values, count(*) AS aggregate_rows, CAST(%(limit)s::INTEGER AS INTEGER) AS aggregate_probe 
FROM payments 
WHERE payments.tenant_id = %(tenant_id)s::VARCHAR AND payments.method = %(f0)s::VARCHAR
-- params: {"f0": "card", "limit": 21, "tenant_id": "nordwind"}

-- role: rows
SELECT payments.tenant_id AS row_tenant, payments.id AS row_id, payments.reference AS row_label 
FROM payments 
WHERE payments.tenant_id = %(tenant_id)s::VARCHAR AND payments.method = %(f0)s::VARCHAR ORDER BY payments.paid_at DESC NULLS LAST, payments.id COLLATE "C" ASC NULLS LAST 
 LIMIT %(limit)s::INTEGER
-- params: {"f0": "card", "limit": 21, "tenant_id": "nordwind"}
