"""Table names as the Debezium connector itself names its tables (its data-collection id, its topic).

Each connector identifies a table in its own namespace, and names its topic
``<topic.prefix>.<that id>``:

- PostgreSQL, Oracle, Db2, Informix: ``schema.table`` (``source.db`` is the
  database the connector is attached to, not part of the id);
- SQL Server: ``database.schema.table`` (one connector may read several
  databases);
- MySQL, MariaDB: ``database.table`` (no schema).

The frame names a table ``database.table`` (:func:`cdckit.frame.table_names`),
so a change's ``database`` holds that namespace: the schema for PostgreSQL
(as wal2json and test_decoding fill it: ``public.customers`` from every
PostgreSQL producer), ``db.schema`` for SQL Server, the database for MySQL;
``schema`` keeps the schema. A record that does not say which connector wrote
it (``source.connector``, or ``__connector`` in flattened rows) is told by
its position: ``lsn`` is PostgreSQL's, ``scn`` Oracle's. Where that leaves
the namespace open (no connector, or the parts it needs missing), the Kafka
topic ``prefix.<namespace>.table`` says it, when the record has one and its
last part is the record's table.

>>> namespace("postgresql", "postgres", "sales", "order_lines")
('sales', 'sales')
>>> namespace("sqlserver", "testDB", "dbo", "customers")
('testDB.dbo', 'dbo')
>>> namespace("mysql", "inventory", None, "customers")
('inventory', None)
>>> namespace(None, None, None, "customers", "dbserver1.public.customers")  # nothing but the topic says it
('public', None)
"""

from __future__ import annotations

__all__ = ["SCHEMA_NAMED", "CATALOG_SCHEMA_NAMED", "DATABASE_NAMED", "connector_of", "namespace", "named"]

#: Connectors whose data-collection id is ``schema.table``.
SCHEMA_NAMED = frozenset({"postgresql", "oracle", "db2", "informix"})
#: Connectors whose data-collection id is ``database.schema.table``.
CATALOG_SCHEMA_NAMED = frozenset({"sqlserver"})
#: Connectors whose data-collection id is ``database.table``.
DATABASE_NAMED = frozenset({"mysql", "mariadb"})


def connector_of(connector: object, lsn: object = None, scn: object = None) -> str | None:
    """The connector that wrote a change: as ``source.connector`` says, else told by its position field
    (``lsn``: PostgreSQL, ``scn``: Oracle), else None.

    >>> connector_of("sqlserver"), connector_of(None, lsn=24023128), connector_of(None, scn="2868546")
    ('sqlserver', 'postgresql', 'oracle')
    """
    if connector.__class__ is str and connector:
        return connector
    if lsn is not None:
        return "postgresql"
    if scn is not None:
        return "oracle"
    return None


def namespace(
    connector: str | None, db: str | None, schema: str | None, table: str | None, topic: str | None = None
) -> tuple[str | None, str | None] | None:
    """``(database, schema)`` of a change so that the frame names its table as ``connector`` does (see the
    module); None when only a Kafka topic could tell and ``topic`` is None (:func:`named` falls back then).

    >>> namespace("oracle", "ORCLPDB1", "DEBEZIUM", "CUSTOMERS")
    ('DEBEZIUM', 'DEBEZIUM')
    >>> namespace("postgresql", None, None, "customers", "cdckit_flat.public.customers")
    ('public', 'public')
    >>> namespace(None, "shop", "public", "t", "srv.shop.public.t"), namespace(None, "shop", "public", "t")
    (('shop.public', 'public'), None)
    """
    if connector in SCHEMA_NAMED:
        if schema:
            return schema, schema
    elif connector in CATALOG_SCHEMA_NAMED:
        if db and schema:
            return f"{db}.{schema}", schema
    elif connector in DATABASE_NAMED or (connector is None and not schema and db):
        if db or not table:
            return db, schema
    elif not table:
        return db, schema
    elif connector is not None:  # a connector named here by no rule (Vitess, Spanner...): as the record says
        return db, schema
    if topic is None:
        return None
    parts = topic.split(".")
    if len(parts) < 3 or parts[-1] != table:  # prefix.<namespace>.table, or a topic routed elsewhere
        return db, schema
    names = parts[1:-1]  # the prefix may hold dots itself: the namespace is counted from the table
    if connector in CATALOG_SCHEMA_NAMED:
        return (f"{names[-2]}.{names[-1]}", names[-1]) if len(names) >= 2 else (db, schema)
    if connector in SCHEMA_NAMED:
        return names[-1], names[-1]
    if connector in DATABASE_NAMED:
        return names[-1], schema
    # no connector: the topic says which of the record's own parts name the table
    if db and schema:
        if names[-2:] == [db, schema]:
            return f"{db}.{schema}", schema
        if names[-1] == schema:
            return schema, schema
        return db, schema
    if schema:
        return (schema, schema) if names[-1] == schema else (db, schema)
    return names[-1], schema


def named(
    connector: str | None, db: str | None, schema: str | None, table: str | None, topic: str | None = None
) -> tuple[str | None, str | None]:
    """:func:`namespace`, or the record's own ``(db, schema)`` where nothing tells more.

    >>> named(None, "shop", "public", "t")
    ('shop', 'public')
    """
    found = namespace(connector, db, schema, table, topic)
    return (db, schema) if found is None else found
