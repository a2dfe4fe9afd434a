"""The explorer widget moved to :mod:`cdckit.viz.explorer`; ``slim_widget_state`` to :mod:`cdckit.notebook`.

This path still works for a while and warns (:mod:`cdckit.moved`).
"""

from .moved import moved_to

__getattr__ = moved_to(__name__, "cdckit.viz.explorer",
                       {"slim_widget_state": "cdckit.notebook", "SAVED_CODE_LIMIT": "cdckit.notebook"})
