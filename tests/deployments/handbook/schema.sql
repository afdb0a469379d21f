-- An employee handbook's own table (portable: runs on SQLite and PostgreSQL).
CREATE TABLE handbook_guides (
    tenant_id VARCHAR(64) NOT NULL,
    id VARCHAR(32) NOT NULL,
    heading VARCHAR(300) NOT NULL,
    content TEXT NOT NULL,
    chapter VARCHAR(100),
    PRIMARY KEY (tenant_id, id)
);
