-- The support desk's own tables (portable: runs on SQLite and PostgreSQL).
-- Every table carries the tenant; ids are strings and unique per tenant only.

CREATE TABLE agents (
    tenant_id VARCHAR(64) NOT NULL,
    id VARCHAR(32) NOT NULL,
    name VARCHAR(200) NOT NULL,
    team VARCHAR(32) NOT NULL,
    email VARCHAR(320),
    hired_at TIMESTAMP WITH TIME ZONE NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

CREATE TABLE tickets (
    tenant_id VARCHAR(64) NOT NULL,
    id VARCHAR(32) NOT NULL,
    subject VARCHAR(500) NOT NULL,
    body TEXT NOT NULL,
    status VARCHAR(16) NOT NULL,
    priority VARCHAR(16) NOT NULL,
    channel VARCHAR(16) NOT NULL,
    requester VARCHAR(200) NOT NULL,
    assignee_id VARCHAR(32),
    opened_at TIMESTAMP WITH TIME ZONE NOT NULL,
    closed_at TIMESTAMP WITH TIME ZONE,
    refund_amount NUMERIC(12, 2),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, assignee_id) REFERENCES agents (tenant_id, id)
);

CREATE INDEX ix_tickets_tenant_status ON tickets (tenant_id, status);
CREATE INDEX ix_tickets_tenant_opened ON tickets (tenant_id, opened_at);

CREATE TABLE kb_articles (
    tenant_id VARCHAR(64) NOT NULL,
    id VARCHAR(32) NOT NULL,
    title VARCHAR(500) NOT NULL,
    body TEXT NOT NULL,
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
