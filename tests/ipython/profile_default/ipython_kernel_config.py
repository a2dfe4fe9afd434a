# Kernel profile for the notebook tests (make test sets IPYTHONDIR to tests/ipython).
# The JVM behind Spark writes to the process's own stdout/stderr; without this,
# ipykernel copies that output into whichever cell is running, at random.
c.IPKernelApp.capture_fd_output = False  # noqa: F821
# No command history: the profile lives in the repository and a test run must leave it as it was.
c.HistoryManager.enabled = False  # noqa: F821
# PySpark 4.3 warns on every pandas conversion under pandas 3 (that it does not fully support it yet, and
# pandas' deprecation of a keyword PySpark passes): its own notice, which would differ between the pandas
# versions the notebooks are tested on. cdckit's own warnings still show.
c.InteractiveShellApp.exec_lines = [  # noqa: F821
    "import warnings",
    "warnings.filterwarnings('ignore', message='PySpark does not yet fully support pandas', category=FutureWarning)",
    "warnings.filterwarnings('ignore', message='The copy keyword is deprecated', module='pyspark')",
]
