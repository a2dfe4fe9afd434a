"""cdckit's version, written once: the package (``cdckit.__version__``), its build (``pyproject.toml`` reads it
from here), the command line's ``--version`` and the report's footer.

>>> from cdckit.version import __version__
>>> __version__.count(".")
2
"""

__version__ = "0.1.0"
