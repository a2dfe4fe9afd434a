"""A real MySQL (MariaDB 10.11), captured by Debezium: a throwaway server, a seeded workload of MySQL's type
edges, and the Debezium MySQL connector's capture of it.

The end-to-end test (``tests/test_debezium_mysql.py``) runs it and checks
cdckit's replay against the live tables cell by cell. Debezium 3.x does not
support MariaDB through its MySQL connector officially: the server announces a
``5.5.5-`` version (:mod:`cdckit.samples.mysql.server`) so that the connector
takes it for what it can read.
"""
