"""The explorer widget, now :mod:`cdckit.viz.explorer` (this path is kept for old imports).

:func:`slim_widget_state`, which keeps a notebook saved with its widget
state small, is notebook tooling: it lives in :mod:`cdckit.notebook`.

>>> from cdckit.explorer import explore, slim_widget_state
>>> explore.__module__, slim_widget_state.__module__
('cdckit.viz.explorer', 'cdckit.notebook')
"""

from .notebook import SAVED_CODE_LIMIT, slim_widget_state
from .viz.explorer import LISTED, MAX_LANES, TIME_STEPS, Explorer, explore

__all__ = ["explore", "Explorer", "slim_widget_state", "LISTED", "MAX_LANES", "TIME_STEPS", "SAVED_CODE_LIMIT"]
