-- An online shop's own tables, normalized the way real schemas are (portable:
-- runs on SQLite and PostgreSQL). Every table carries the tenant; INTEGER ids
-- are unique per tenant only; amounts live on order lines and on payments; no
-- view does a join. Order lines keep the product's title as it was sold.

CREATE TABLE customers (
    tenant_id VARCHAR(64) NOT NULL,
    id INTEGER NOT NULL,
    name VARCHAR(200) NOT NULL,
    city VARCHAR(80) NOT NULL,
    tier VARCHAR(16) NOT NULL,
    newsletter BOOLEAN NOT NULL,
    signed_up DATE NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

CREATE TABLE products (
    tenant_id VARCHAR(64) NOT NULL,
    id INTEGER NOT NULL,
    name VARCHAR(200) NOT NULL,
    category VARCHAR(32) NOT NULL,
    list_price NUMERIC(10, 2) NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

CREATE TABLE orders (
    tenant_id VARCHAR(64) NOT NULL,
    id INTEGER NOT NULL,
    number VARCHAR(32) NOT NULL,
    customer_id INTEGER NOT NULL,
    status VARCHAR(16) NOT NULL,
    channel VARCHAR(16) NOT NULL,
    ordered_at TIMESTAMP NOT NULL,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id)
);

CREATE INDEX ix_orders_customer ON orders (tenant_id, customer_id);
CREATE INDEX ix_orders_ordered_at ON orders (tenant_id, ordered_at);

CREATE TABLE order_lines (
    tenant_id VARCHAR(64) NOT NULL,
    id INTEGER NOT NULL,
    order_id INTEGER NOT NULL,
    product_id INTEGER NOT NULL,
    title VARCHAR(200) NOT NULL,
    quantity INTEGER NOT NULL,
    unit_price NUMERIC(10, 2) NOT NULL,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, order_id) REFERENCES orders (tenant_id, id),
    FOREIGN KEY (tenant_id, product_id) REFERENCES products (tenant_id, id)
);

CREATE INDEX ix_order_lines_order ON order_lines (tenant_id, order_id);
CREATE INDEX ix_order_lines_product ON order_lines (tenant_id, product_id);

CREATE TABLE payments (
    tenant_id VARCHAR(64) NOT NULL,
    id INTEGER NOT NULL,
    order_id INTEGER NOT NULL,
    reference VARCHAR(32) NOT NULL,
    amount NUMERIC(10, 2) NOT NULL,
    method VARCHAR(16) NOT NULL,
    paid_at TIMESTAMP NOT NULL,
    refunded BOOLEAN NOT NULL,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, order_id) REFERENCES orders (tenant_id, id)
);

CREATE INDEX ix_payments_order ON payments (tenant_id, order_id);
