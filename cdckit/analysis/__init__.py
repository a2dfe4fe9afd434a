"""The analyses of an event frame: replay (materialize, history, scd2), typed tables and schemas, filters, keys,
ordering checks, and the comparison and reconciliation with the source.

The public functions are named at the top, in :mod:`cdckit` (``cdckit.materialize``, ``cdckit.table``, ...);
this package holds the modules that make them.
"""
