-- A clinic's own tables (portable: runs on SQLite and PostgreSQL), the shapes a
-- deployer's schema has and the support desk lacks: INTEGER ids, DATE and
-- BOOLEAN columns, a foreign key, and a view the catalog asks about as an entity.

CREATE TABLE doctors (
    tenant_id VARCHAR(64) NOT NULL,
    id INTEGER NOT NULL,
    name VARCHAR(200) NOT NULL,
    specialty VARCHAR(32) NOT NULL,
    accepting BOOLEAN NOT NULL,
    licensed_on DATE NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

CREATE TABLE appointments (
    tenant_id VARCHAR(64) NOT NULL,
    id INTEGER NOT NULL,
    patient VARCHAR(200) NOT NULL,
    doctor_id INTEGER NOT NULL,
    scheduled_on DATE NOT NULL,
    telehealth BOOLEAN NOT NULL,
    status VARCHAR(16) NOT NULL,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, doctor_id) REFERENCES doctors (tenant_id, id)
);

CREATE INDEX ix_appointments_tenant_scheduled ON appointments (tenant_id, scheduled_on);

-- The visits still to come, as the clinic's own reports read them.
CREATE VIEW upcoming_visits AS
    SELECT tenant_id, id, patient, doctor_id, scheduled_on, telehealth
    FROM appointments
    WHERE status = 'booked';
