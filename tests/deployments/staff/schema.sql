-- A small HR deployment's own tables (portable: runs on SQLite and PostgreSQL).
-- DATE and BOOLEAN columns on purpose: the shapes the demo and the desk lack.

CREATE TABLE employees (
    tenant_id VARCHAR(64) NOT NULL,
    id VARCHAR(32) NOT NULL,
    name VARCHAR(200) NOT NULL,
    city VARCHAR(32) NOT NULL,
    level VARCHAR(16) NOT NULL,
    remote BOOLEAN,
    hired_on DATE NOT NULL,
    salary NUMERIC(12, 2),
    PRIMARY KEY (tenant_id, id)
);

CREATE TABLE sites (
    tenant_id VARCHAR(64) NOT NULL,
    id VARCHAR(32) NOT NULL,
    name VARCHAR(200) NOT NULL,
    active BOOLEAN NOT NULL,
    opened_on DATE NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
