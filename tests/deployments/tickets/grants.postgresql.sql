-- PostgreSQL only, after `qdsl db upgrade` (which creates the qdsl_reader role):
-- qdsl reads as qdsl_reader with app.tenant_id set per transaction, so the desk
-- grants it SELECT and keeps each tenant's rows behind row-level security.

GRANT SELECT ON agents, tickets, kb_articles TO qdsl_reader;

ALTER TABLE agents ENABLE ROW LEVEL SECURITY;
ALTER TABLE tickets ENABLE ROW LEVEL SECURITY;
ALTER TABLE kb_articles ENABLE ROW LEVEL SECURITY;

CREATE POLICY tenant_isolation ON agents
    USING (tenant_id = NULLIF(current_setting('app.tenant_id', true), ''));
CREATE POLICY tenant_isolation ON tickets
    USING (tenant_id = NULLIF(current_setting('app.tenant_id', true), ''));
CREATE POLICY tenant_isolation ON kb_articles
    USING (tenant_id = NULLIF(current_setting('app.tenant_id', true), ''));
