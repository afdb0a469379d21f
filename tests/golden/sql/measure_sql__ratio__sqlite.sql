-- template: payment.aggregate
-- dialect: sqlite

-- role: main
SELECT sum(payments.amount) AS aggregate_value, count(DISTINCT payments.order_id) AS aggregate_value_1, count(*) AS aggregate_values, count(*) AS aggregate_rows, CAST(? AS INTEGER) AS aggregate_probe 
FROM payments 
WHERE payments.tenant_id = ? AND payments.method = ?
-- params: {"f0": "card", "limit": 21, "tenant_id": "nordwind"}

-- role: rows
SELECT payments.tenant_id AS row_tenant, payments.id AS row_id, payments.reference AS row_label 
FROM payments 
WHERE payments.tenant_id = ? AND payments.method = ? ORDER BY payments.paid_at DESC NULLS LAST, payments.id ASC NULLS LAST
 LIMIT ? OFFSET ?
-- params: {"f0": "card", "limit": 21, "tenant_id": "nordwind"}
