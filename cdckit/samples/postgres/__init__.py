"""A real PostgreSQL, captured: a throwaway server, a seeded workload, and the capture of it.

``python -m cdckit.samples.postgres.capture`` starts a server (Debian's
``postgresql-15`` and ``postgresql-15-wal2json``), runs the workload, captures
it with wal2json (both format versions) and test_decoding, and writes the
captures and the tables' final contents under ``cdckit/samples/data``. The
end-to-end test (``tests/test_postgres.py``) runs the same code and checks
cdckit's replay against the live tables.
"""
