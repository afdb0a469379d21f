-- The HR deployment's own tables (portable: runs on SQLite and PostgreSQL).
-- Ids are strings, unique per tenant only.

CREATE TABLE departments (
    tenant_id VARCHAR(64) NOT NULL,
    id VARCHAR(16) NOT NULL,
    name VARCHAR(200) NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

CREATE TABLE employees (
    tenant_id VARCHAR(64) NOT NULL,
    id VARCHAR(16) NOT NULL,
    name VARCHAR(200) NOT NULL,
    level VARCHAR(16) NOT NULL,
    city VARCHAR(64) NOT NULL,
    department_id VARCHAR(16),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, department_id) REFERENCES departments (tenant_id, id)
);

-- Offices belong to no department: a project scope cannot apply to them.
CREATE TABLE sites (
    tenant_id VARCHAR(64) NOT NULL,
    id VARCHAR(16) NOT NULL,
    name VARCHAR(200) NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
