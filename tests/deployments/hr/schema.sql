-- The HR deployment's tables and rows (portable: runs on SQLite and PostgreSQL).
CREATE TABLE employees (tenant_id VARCHAR(64) NOT NULL, id VARCHAR(16) NOT NULL, full_name TEXT NOT NULL, department VARCHAR(32) NOT NULL, hired_on DATE NOT NULL, remote BOOLEAN NOT NULL, monthly_salary NUMERIC(10, 2), PRIMARY KEY (tenant_id, id));
CREATE TABLE members (tenant_id VARCHAR(64) NOT NULL, id INTEGER NOT NULL, name TEXT NOT NULL, joined_on DATE, PRIMARY KEY (tenant_id, id));
INSERT INTO employees VALUES ('acme', 'E-4', 'Alice Chen', 'engineering', '2025-03-01', TRUE, 52000.50);
INSERT INTO employees VALUES ('acme', 'E-13', 'Bo Li', 'sales', '2024-11-20', FALSE, 31000.00);
INSERT INTO employees VALUES ('globex', 'E-4', 'Dana Wu', 'sales', '2023-05-02', FALSE, 40000.00);
INSERT INTO members VALUES ('acme', 4, 'Ann', '2025-03-01');
INSERT INTO members VALUES ('acme', 10, 'Ben', '2024-01-05');
INSERT INTO members VALUES ('acme', 9, 'Cy', '2024-06-05');
INSERT INTO members VALUES ('globex', 4, 'Gus', '2022-02-02');
