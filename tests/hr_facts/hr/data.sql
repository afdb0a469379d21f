-- Two tenants (acme, globex) sharing employee and department ids.

INSERT INTO departments (tenant_id, id, name) VALUES ('acme', 'D-1', 'Platform');
INSERT INTO departments (tenant_id, id, name) VALUES ('acme', 'D-2', 'Data');
INSERT INTO departments (tenant_id, id, name) VALUES ('globex', 'D-1', 'Sales');

INSERT INTO employees (tenant_id, id, name, level, city, department_id) VALUES ('acme', 'E-1', 'Li Wei', 'senior', 'Shanghai', 'D-1');
INSERT INTO employees (tenant_id, id, name, level, city, department_id) VALUES ('acme', 'E-4', 'Zhang Min', 'junior', 'Beijing', 'D-1');
INSERT INTO employees (tenant_id, id, name, level, city, department_id) VALUES ('acme', 'E-7', 'Maria Garcia', 'senior', 'Shanghai', 'D-2');
INSERT INTO employees (tenant_id, id, name, level, city, department_id) VALUES ('acme', 'E-13', 'Chen Jing', 'senior', 'Shanghai', 'D-2');
INSERT INTO employees (tenant_id, id, name, level, city, department_id) VALUES ('acme', 'E-20', 'Olivia Brown', 'junior', 'Beijing', 'D-2');
INSERT INTO employees (tenant_id, id, name, level, city, department_id) VALUES ('globex', 'E-1', 'Lars Nilsson', 'senior', 'Berlin', 'D-1');
INSERT INTO employees (tenant_id, id, name, level, city, department_id) VALUES ('globex', 'E-4', 'Fatima Zahra', 'junior', 'Berlin', 'D-1');

INSERT INTO sites (tenant_id, id, name) VALUES ('acme', 'S-1', 'Shanghai office');
INSERT INTO sites (tenant_id, id, name) VALUES ('acme', 'S-2', 'Beijing office');
