INSERT INTO handbook_guides (tenant_id, id, heading, content, chapter) VALUES ('acme', 'HB-1', 'Expense claims', 'Expense claims are approved by the line manager within five working days, then paid with the next payroll.', 'Money');
INSERT INTO handbook_guides (tenant_id, id, heading, content, chapter) VALUES ('acme', 'HB-2', 'Parental leave', 'Parental leave lasts sixteen weeks at full pay and can be split into two blocks.', 'Time off');
INSERT INTO handbook_guides (tenant_id, id, heading, content, chapter) VALUES ('acme', 'HB-3', '报销审批', '报销由直属经理在五个工作日内审批，随下一次工资发放。', '财务');
INSERT INTO handbook_guides (tenant_id, id, heading, content, chapter) VALUES ('globex', 'HB-1', 'Expense claims', 'Globex pays expense claims weekly.', 'Finance');
