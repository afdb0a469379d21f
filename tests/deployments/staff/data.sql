-- Two tenants sharing ids. The tests read it as of 2026-11-01T09:00Z ("now"):
-- E-5 was hired that day, E-8 six days before, E-9 seven days before.
-- E-6 has no remote flag at all (neither remote nor on-site).

INSERT INTO employees (tenant_id, id, name, city, level, remote, hired_on, salary) VALUES ('acme', 'E-1', 'Alice Wang', 'shanghai', 'senior', TRUE, '2019-03-04', 42000);
INSERT INTO employees (tenant_id, id, name, city, level, remote, hired_on, salary) VALUES ('acme', 'E-2', 'Bo Li', 'shanghai', 'senior', FALSE, '2021-06-01', 38000);
INSERT INTO employees (tenant_id, id, name, city, level, remote, hired_on, salary) VALUES ('acme', 'E-3', 'Chen Jie', 'shanghai', 'junior', TRUE, '2024-02-10', 18000);
INSERT INTO employees (tenant_id, id, name, city, level, remote, hired_on, salary) VALUES ('acme', 'E-4', 'Dana Zhou', 'beijing', 'senior', TRUE, '2026-10-20', 45000);
INSERT INTO employees (tenant_id, id, name, city, level, remote, hired_on, salary) VALUES ('acme', 'E-5', 'Evan Xu', 'beijing', 'junior', FALSE, '2026-11-01', 16000);
INSERT INTO employees (tenant_id, id, name, city, level, remote, hired_on, salary) VALUES ('acme', 'E-6', 'Fang Liu', 'shenzhen', 'senior', NULL, '2026-07-15', 40000);
INSERT INTO employees (tenant_id, id, name, city, level, remote, hired_on, salary) VALUES ('acme', 'E-7', 'Gao Yan', 'shanghai', 'senior', TRUE, '2025-05-20', 47000);
INSERT INTO employees (tenant_id, id, name, city, level, remote, hired_on, salary) VALUES ('acme', 'E-8', 'Hu Min', 'shenzhen', 'junior', TRUE, '2026-10-26', 17000);
INSERT INTO employees (tenant_id, id, name, city, level, remote, hired_on, salary) VALUES ('acme', 'E-9', 'Iris Zhang', 'beijing', 'junior', FALSE, '2026-10-25', 15500);
INSERT INTO employees (tenant_id, id, name, city, level, remote, hired_on, salary) VALUES ('globex', 'E-1', 'Hana Sato', 'shanghai', 'senior', FALSE, '2026-11-01', 50000);
INSERT INTO employees (tenant_id, id, name, city, level, remote, hired_on, salary) VALUES ('globex', 'E-2', 'Ivan Petrov', 'shanghai', 'senior', TRUE, '2020-01-15', 41000);

INSERT INTO sites (tenant_id, id, name, active, opened_on) VALUES ('acme', 'S-1', 'Shanghai HQ', TRUE, '2015-01-01');
INSERT INTO sites (tenant_id, id, name, active, opened_on) VALUES ('acme', 'S-2', 'Beijing office', FALSE, '2018-09-01');
INSERT INTO sites (tenant_id, id, name, active, opened_on) VALUES ('acme', 'S-3', 'Shenzhen office', TRUE, '2025-08-01');
INSERT INTO sites (tenant_id, id, name, active, opened_on) VALUES ('globex', 'S-1', 'Tokyo office', FALSE, '2019-04-01');
