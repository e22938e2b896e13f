-- Initial state of pg-active-customers-view: a tiny shop with customers and their orders.
-- Plain SQL for PostgreSQL; run it against an empty database.

CREATE TABLE customers (
    id        integer PRIMARY KEY,
    full_name text    NOT NULL,
    email     text    NOT NULL UNIQUE,
    status    text    NOT NULL CHECK (status IN ('active', 'trial', 'churned')),
    signed_up date    NOT NULL
);

CREATE TABLE orders (
    id          integer PRIMARY KEY,
    customer_id integer NOT NULL REFERENCES customers (id),
    ordered_at  date    NOT NULL,
    total_cents integer NOT NULL CHECK (total_cents >= 0)
);

CREATE INDEX orders_customer_id_idx ON orders (customer_id);

INSERT INTO customers (id, full_name, email, status, signed_up) VALUES
    (1, 'Ada Moreno', 'ada.moreno@example.com', 'active', '2023-02-14'),
    (2, 'Bilal Haddad', 'bilal.haddad@example.com', 'active', '2023-03-02'),
    (3, 'Chen Jing', 'chen.jing@example.com', 'trial', '2024-01-20'),
    (4, 'Dara Okafor', 'dara.okafor@example.com', 'active', '2023-05-11'),
    (5, 'Elif Demir', 'elif.demir@example.com', 'active', '2023-06-30'),
    (6, 'Farah Nasser', 'farah.nasser@example.com', 'churned', '2022-11-08'),
    (7, 'Gustavo Lima', 'gustavo.lima@example.com', 'active', '2022-09-17'),
    (8, 'Hana Kobayashi', 'hana.kobayashi@example.com', 'trial', '2024-02-03'),
    (9, 'Ivan Petrov', 'ivan.petrov@example.com', 'active', '2023-12-01'),
    (10, 'Jonas Berg', 'jonas.berg@example.com', 'churned', '2022-07-25'),
    (11, 'Kofi Mensah', 'kofi.mensah@example.com', 'active', '2023-08-19'),
    (12, 'Lucia Romano', 'lucia.romano@example.com', 'trial', '2024-02-27');

INSERT INTO orders (id, customer_id, ordered_at, total_cents) VALUES
    (101, 1, '2023-03-01', 4200),
    (102, 7, '2023-03-05', 1899),
    (103, 1, '2023-06-12', 12500),
    (104, 2, '2023-07-04', 3050),
    (105, 6, '2023-07-19', 760),
    (106, 7, '2023-08-22', 2499),
    (107, 4, '2023-09-09', 8800),
    (108, 10, '2023-09-30', 1500),
    (109, 7, '2023-11-11', 5400),
    (110, 11, '2023-12-15', 2275),
    (111, 2, '2024-01-08', 990),
    (112, 1, '2024-01-21', 6600),
    (113, 3, '2024-01-29', 1250),
    (114, 6, '2024-02-02', 3300),
    (115, 7, '2024-02-14', 7150),
    (116, 8, '2024-02-20', 1999);
