-- Two policies of one tenant, several payments each: a list of payments is never
-- the total per policy that "total premiums by policy" asks for.

INSERT INTO premiums (tenant_id, id, policy_number, amount, paid_on, channel) VALUES ('acme', 'PM-1', 'POL-100', 1200, '2026-01-15', 'agent');
INSERT INTO premiums (tenant_id, id, policy_number, amount, paid_on, channel) VALUES ('acme', 'PM-2', 'POL-100', 1200, '2026-04-15', 'agent');
INSERT INTO premiums (tenant_id, id, policy_number, amount, paid_on, channel) VALUES ('acme', 'PM-3', 'POL-200', 800, '2026-02-01', 'online');
INSERT INTO premiums (tenant_id, id, policy_number, amount, paid_on, channel) VALUES ('acme', 'PM-4', 'POL-200', 950, '2026-08-01', 'online');
INSERT INTO premiums (tenant_id, id, policy_number, amount, paid_on, channel) VALUES ('acme', 'PM-5', 'POL-300', 3000, '2025-12-20', 'agent');
