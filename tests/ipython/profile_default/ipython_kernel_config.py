# Kernel profile for the notebook tests (make test sets IPYTHONDIR to tests/ipython).
# The JVM behind Spark writes to the process's own stdout/stderr; without this,
# ipykernel copies that output into whichever cell is running, at random.
c.IPKernelApp.capture_fd_output = False  # noqa: F821
# No command history: the profile lives in the repository and a test run must leave it as it was.
c.HistoryManager.enabled = False  # noqa: F821
