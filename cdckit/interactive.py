"""Interactive tables (itables), now :mod:`cdckit.viz.interactive` (this path is kept for old imports).

>>> from cdckit.interactive import table_html
>>> table_html.__module__
'cdckit.viz.interactive'
"""

from .viz.interactive import (TABLE_CLASS, TABLE_CSS, UNPACK_JS, bundle, bundle_file, init_html, table_html,
                              table_id, table_options)

__all__ = ["TABLE_CLASS", "TABLE_CSS", "UNPACK_JS", "bundle", "bundle_file", "init_html", "table_html", "table_id",
           "table_options"]
