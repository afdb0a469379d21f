-- An insurer's premium ledger (portable: runs on SQLite and PostgreSQL).

CREATE TABLE premiums (
    tenant_id VARCHAR(64) NOT NULL,
    id VARCHAR(32) NOT NULL,
    policy_number VARCHAR(32) NOT NULL,
    amount NUMERIC(12, 2) NOT NULL,
    paid_on DATE NOT NULL,
    channel VARCHAR(16) NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
