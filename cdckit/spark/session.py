"""A Spark session that works out of the box, and cdckit on its executors.

``get_spark()`` checks for Java 17+ before starting the JVM (and says what to
install when it is missing), starts a quiet local session (or reuses the
active one), and makes sure executors can import cdckit: on a cluster whose
workers do not have it installed, cdckit ships itself as a zip (``addPyFile``).

A local session's JVM runs the whole job, so its heap (``spark.driver.memory``,
1 GiB by Spark's default) is sized from the machine: a quarter of the
memory, between 1 and 16 GiB (:func:`driver_memory`), unless the caller sets
it. The choice is logged (INFO, logger ``cdckit.spark``) and kept in
:func:`chosen_driver_memory`.

Spark runs cdckit's tasks in Python workers started with the interpreter
``PYSPARK_PYTHON`` named when the session began (Spark's default: ``python3``
on PATH, which in a Jupyter kernel of a venv that is not activated is the
system's, without pandas). :func:`check_workers` runs one tiny job before a
session's first cdckit job and, when the workers cannot import what cdckit's
tasks need, raises :class:`SparkSetupError` naming that Python, what it lacks
and how to fix it, instead of a ``ModuleNotFoundError`` deep in a Java trace.

Spark 4 starts the JVM with the incubating vector module, and the JVM's
launcher then prints ``WARNING: Using incubator modules: jdk.incubator.vector``
on its stderr, which no log setting reaches. The JVM is therefore started with
its stderr going through :func:`filtered_stderr`, which passes every other
line on and drops that one.

PySpark 4.0 under pandas 3 warns on every conversion between Spark and
pandas, twice over, about nothing a cdckit user can act on:
:func:`quiet_pandas3_notices` (called by ``get_spark``) filters exactly
those two warnings, raised from PySpark's own modules (:data:`PANDAS3_NOTICES`
says why each is harmless); every other warning still shows.

>>> java_major('openjdk version "17.0.15" 2025-04-15'), java_major('java version "1.8.0_392"')
(17, 8)
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import SparkSetupError

__all__ = [
    "get_spark",
    "check_java",
    "java_major",
    "ship_cdckit",
    "check_workers",
    "workers_trouble",
    "driver_memory",
    "total_memory",
    "chosen_driver_memory",
    "filtered_stderr",
    "LOG4J2_CONFIG",
    "MINIMUM_JAVA",
    "JVM_NOISE",
    "WORKER_MODULES",
    "PANDAS3_NOTICES",
    "quiet_pandas3_notices",
]

log = logging.getLogger("cdckit.spark")

#: The quiet logging configuration the driver JVM is started with.
LOG4J2_CONFIG = Path(__file__).with_name("log4j2.properties")
MINIMUM_JAVA = 17
#: Lines the JVM prints on its stderr that say nothing to a cdckit user (dropped by :func:`filtered_stderr`).
JVM_NOISE = (b"WARNING: Using incubator modules: jdk.incubator.vector",)

#: The warnings PySpark 4.0 raises from its own modules (``pyspark.*``) on each conversion under pandas 3, as
#: (the start of the message, why it is harmless to cdckit's users):
PANDAS3_NOTICES = (
    (
        "PySpark does not yet fully support pandas >= 3.0.0",
        "a blanket notice on every toPandas and createDataFrame: cdckit converts through Arrow, and its tests "
        "compare every Spark result with the pandas one under the locked pandas 3 (tests/test_engines_agree.py)",
    ),
    (
        "The copy keyword is deprecated",
        "PySpark passes astype(copy=False), which pandas 3 deprecates because Copy-on-Write makes it a no-op: "
        "nothing changes in what is converted",
    ),
)

_INSTALL_JAVA = (
    "Spark needs Java {minimum} or newer ({found}). Install it:\n"
    "  Debian/Ubuntu: sudo apt-get install openjdk-17-jre-headless\n"
    "  conda:         conda install -c conda-forge openjdk=17\n"
    "then put `java` on PATH or set JAVA_HOME."
)


def java_major(version_text: str) -> int | None:
    """The major version in ``java -version`` output (``1.8`` is 8)."""
    match = re.search(r'version "(\d+)(?:\.(\d+))?', version_text)
    if match is None:
        return None
    major = int(match[1])
    return int(match[2] or 0) if major == 1 else major


def check_java(minimum: int = MINIMUM_JAVA) -> int:
    """The Java major version Spark would use; :class:`SparkSetupError` saying what to install when too old."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.path.exists(java):
        raise SparkSetupError(_INSTALL_JAVA.format(minimum=minimum, found="no java found"))
    try:
        shown = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as err:
        raise SparkSetupError(_INSTALL_JAVA.format(minimum=minimum, found=f"{java} did not run: {err}")) from None
    major = java_major(shown.stderr + shown.stdout)
    if major is None or major < minimum:
        raise SparkSetupError(_INSTALL_JAVA.format(minimum=minimum, found=f"{java} is version {major}"))
    return major


_GIB = 2**30
_chosen: dict[str, str] = {}


def driver_memory(total_bytes: int | None) -> str:
    """``spark.driver.memory`` for a local session on a machine with ``total_bytes`` of memory (None: unknown).

    A quarter of it, at least 1 GiB and at most 16 GiB, in MiB.

    >>> driver_memory(24 * 2**30), driver_memory(2 * 2**30), driver_memory(256 * 2**30), driver_memory(None)
    ('6144m', '1024m', '16384m', '1024m')
    """
    quarter = (total_bytes or 0) // 4
    return f"{min(max(quarter, _GIB), 16 * _GIB) // 2**20}m"


def total_memory() -> int | None:
    """The memory this process may use: physical memory, or the container's (cgroup) limit when lower."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = None
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if text.isdigit() and (total is None or int(text) < total):
            total = int(text)
    return total


def chosen_driver_memory() -> str | None:
    """The ``spark.driver.memory`` :func:`get_spark` chose for the session it started (None: set by the caller)."""
    return _chosen.get("spark.driver.memory")


def get_spark(master: str = "local[*]", app_name: str = "cdckit", config: dict[str, Any] | None = None) -> Any:
    """The active Spark session, or a new quiet one (UTC, UI and progress bars off).

    ``config`` adds or overrides Spark settings for a new session. Before a
    JVM is started, Java is checked (:func:`check_java`), ``SPARK_LOCAL_IP``
    and ``PYSPARK_PYTHON`` get defaults (loopback, this interpreter). A local
    session's ``spark.driver.memory`` is sized from the machine
    (:func:`driver_memory`) unless ``config`` (or ``SPARK_DRIVER_MEMORY``,
    ``--driver-memory`` in ``PYSPARK_SUBMIT_ARGS``) sets it.
    """
    from pyspark.sql import SparkSession

    quiet_pandas3_notices()
    active = SparkSession.getActiveSession()
    if active is not None:
        ship_cdckit(active)
        return active
    check_java()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    settings = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{LOG4J2_CONFIG}",
        "spark.executor.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{LOG4J2_CONFIG}",
    }
    if master.startswith("local"):  # few shuffle partitions: one machine gains nothing from 200 tiny tasks
        cores = master[6:-1] if master.startswith("local[") else "1"
        count = os.cpu_count() or 2 if cores in ("*", "") else int(cores.split(",")[0])
        settings["spark.sql.shuffle.partitions"] = str(max(4, 2 * count))
    _chosen.clear()
    chosen_elsewhere = "SPARK_DRIVER_MEMORY" in os.environ or "--driver-memory" in os.environ.get(
        "PYSPARK_SUBMIT_ARGS", ""
    )
    if master.startswith("local") and "spark.driver.memory" not in (config or {}) and not chosen_elsewhere:
        total = total_memory()
        settings["spark.driver.memory"] = _chosen["spark.driver.memory"] = driver_memory(total)
        # findings and metadata are collected: let them use up to half the heap (Spark's default is 1 GiB)
        settings["spark.driver.maxResultSize"] = f"{max(1024, int(settings['spark.driver.memory'][:-1]) // 2)}m"
        log.info(
            "spark.driver.memory=%s (a quarter of this machine's %.1f GiB, 1-16 GiB)",
            settings["spark.driver.memory"],
            (total or 0) / _GIB,
        )
    settings.update(config or {})
    builder = SparkSession.builder.master(master).appName(app_name)
    for name, value in settings.items():
        builder = builder.config(name, value)
    with filtered_stderr():  # the JVM started here inherits the filtered stderr for its whole life
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    ship_cdckit(spark)
    return spark


def quiet_pandas3_notices() -> None:
    """Filter the warnings of :data:`PANDAS3_NOTICES`, and only where PySpark's own modules raise them.

    >>> quiet_pandas3_notices()
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.warn_explicit("The copy keyword is deprecated", FutureWarning, "types.py", 1,
    ...                            module="pyspark.sql.pandas.types")
    ...     warnings.warn_explicit("The copy keyword is deprecated", FutureWarning, "mine.py", 1, module="mine")
    >>> [str(w.message) + " from " + w.filename for w in seen]
    ['The copy keyword is deprecated from mine.py']
    """
    for start, _why in PANDAS3_NOTICES:
        warnings.filterwarnings("ignore", message=re.escape(start), category=Warning, module=r"pyspark\.")


@contextmanager
def filtered_stderr(noise: tuple[bytes, ...] = JVM_NOISE) -> Iterator[None]:
    """While inside, file descriptor 2 is a pipe whose lines go on to the real stderr, except ``noise``.

    Processes started inside (the JVM) keep the pipe as their stderr after the
    block ends; a daemon thread keeps forwarding their lines until they close it.
    This process's own stderr is restored when the block ends.

    >>> import subprocess, sys
    >>> with filtered_stderr((b"drop me",)):  # the child's line never reaches the terminal
    ...     subprocess.run([sys.executable, "-c", "import sys; print('drop me', file=sys.stderr)"]).returncode
    0
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no usable stderr: nothing to filter
        yield
        return
    read_end, write_end = os.pipe()
    forwarder = threading.Thread(
        target=_forward_lines, args=(read_end, saved, noise), daemon=True, name="cdckit-jvm-stderr"
    )
    forwarder.start()
    os.dup2(write_end, 2)
    os.close(write_end)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)


def _forward_lines(read_end: int, target: int, noise: tuple[bytes, ...]) -> None:
    with os.fdopen(read_end, "rb", buffering=0) as lines:
        for line in iter(lines.readline, b""):
            if not line.rstrip(b"\r\n").startswith(noise):
                os.write(target, line)


def ship_cdckit(spark: Any) -> str | None:
    """Send cdckit to the executors of a cluster session (once per SparkContext); returns the zip's path.

    Local sessions run executors from this same Python, so nothing is sent.
    The zip holds the package without its sample data; cdckit's own
    dependencies (pyarrow, orjson, msgspec...) must be installed on workers.
    """
    context = getattr(spark, "sparkContext", None)
    if context is None or context.master.startswith("local"):
        return None
    shipped = getattr(context, "_cdckit_zip", None)
    if shipped:
        return shipped
    path = _zip_package()
    context.addPyFile(path)
    context._cdckit_zip = path
    return path


def _zip_package() -> str:
    package = Path(__file__).resolve().parent.parent
    target = Path(tempfile.mkdtemp(prefix="cdckit-ship-")) / "cdckit.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(package.rglob("*")):
            relative = path.relative_to(package.parent)
            if path.is_dir() or "__pycache__" in path.parts or "data" in relative.parts[2:3]:
                continue
            archive.write(path, relative.as_posix())
    return str(target)


# ---------------------------------------------------------------- the Python of the workers

#: What cdckit's Spark tasks import on the workers (checked by :func:`check_workers`).
WORKER_MODULES = ("pandas", "pyarrow", "orjson", "msgspec", "cdckit.spark")
_workers_checked: set[str] = set()

_WORKER_FIXES = (
    "Stop this session (spark.stop()) and start one whose workers run a Python with cdckit installed, "
    "such as this one ({here}):\n"
    "  - set PYSPARK_PYTHON={here} before the session is built "
    "(os.environ['PYSPARK_PYTHON'] = sys.executable, or in the Jupyter kernel's env);\n"
    "  - with spark-submit: --conf spark.pyspark.python={here};\n"
    "  - or use cdckit.spark.get_spark(), which does this for you."
)


def workers_trouble(python: str, problem: str, here: str | None = None) -> str:
    """The message of :func:`check_workers`: the workers' Python, what is wrong with it, and the fixes.

    ``here`` is the Python the fixes name (default: this interpreter).

    >>> print(workers_trouble("/usr/bin/python3", "cannot import pandas", here="/srv/.venv/bin/python"))
    ... # doctest: +NORMALIZE_WHITESPACE
    Spark's Python workers run /usr/bin/python3, which cannot import pandas.
    Stop this session (spark.stop()) and start one whose workers run a Python with cdckit installed,
    such as this one (/srv/.venv/bin/python):
      - set PYSPARK_PYTHON=/srv/.venv/bin/python before the session is built
        (os.environ['PYSPARK_PYTHON'] = sys.executable, or in the Jupyter kernel's env);
      - with spark-submit: --conf spark.pyspark.python=/srv/.venv/bin/python;
      - or use cdckit.spark.get_spark(), which does this for you.
    """
    return f"Spark's Python workers run {python}, which {problem}.\n" + _WORKER_FIXES.format(
        here=here or sys.executable
    )


def failed_job_problem(error_text: str) -> str:
    """What a failed trivial Python job's error text (a Java trace, say) says is wrong with the workers' Python.

    >>> failed_job_problem("py4j...\\nModuleNotFoundError: No module named 'pandas'\\n\\tat org.apache...")
    'cannot import pandas'
    >>> failed_job_problem('java.io.IOException: Cannot run program "/opt/py": error=2, No such file or directory')
    'cannot be started (Cannot run program "/opt/py": error=2, No such file or directory)'
    """
    missing = dict.fromkeys(name.split(".")[0] for name in re.findall(r"No module named '([^']+)'", error_text))
    if missing:
        return "cannot import " + ", ".join(missing)
    for pattern, what in (
        (r"Python in worker has different version[^\n]*", "is another Python version than the driver's ({})"),
        (r"Cannot run program [^\n]*", "cannot be started ({})"),
    ):
        found = re.search(pattern, error_text)
        if found:
            return what.format(found[0].strip())
    lines = [line.strip() for line in error_text.splitlines() if line.strip()]
    return f"failed a trivial job ({lines[0][:300] if lines else 'no message'})"


def _import_probe(modules: tuple[str, ...]) -> Any:
    """The task of :func:`check_workers`: a nested function, so Spark ships its code rather than a reference
    to this module (which the workers may be unable to import)."""

    def probe(_rows: Any) -> Iterator[tuple[str, list[str]]]:
        import importlib
        import sys as worker_sys

        lacking: dict[str, None] = {}
        for name in modules:
            try:
                importlib.import_module(name)
            except ModuleNotFoundError as err:  # the module, or one it needs (cdckit without pandas: pandas)
                lacking[(err.name or name).split(".")[0]] = None
            except Exception as err:  # noqa: BLE001 - every failure is reported, by name
                lacking[f"{name.split('.')[0]} ({type(err).__name__}: {err})"] = None
        yield worker_sys.executable, list(lacking)

    return probe


def check_workers(spark: Any, modules: tuple[str, ...] = WORKER_MODULES) -> None:
    """Make sure Spark's Python workers can import what cdckit's tasks need; once per SparkContext.

    Runs one tiny job (one task, a few hundred ms the first time; its Python
    worker is then reused by the next job) before a session's first cdckit
    job. When the workers' Python (``PYSPARK_PYTHON`` when the session began,
    else ``python3`` on PATH) cannot import ``modules``, or cannot start, raises
    :class:`SparkSetupError` naming it, what it lacks and the fixes
    (:func:`workers_trouble`). Spark Connect sessions (no SparkContext) are
    not checked: their workers belong to the server.
    """
    try:
        context = spark.sparkContext
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext
        return
    key = f"{context.applicationId}:{','.join(modules)}"
    if key in _workers_checked:
        return
    configured = getattr(context, "pythonExec", None) or "python3"
    python = (shutil.which(configured) or configured) if context.master.startswith("local") else configured
    previous = context.getLocalProperty("spark.job.description")
    context.setLocalProperty("spark.job.description", "cdckit: check the Python of the workers")
    try:
        found = context.parallelize([0], 1).mapPartitions(_import_probe(modules)).collect()
    except Exception as err:  # noqa: BLE001 - a Java trace: say what it means and how to fix it
        raise SparkSetupError(workers_trouble(python, failed_job_problem(str(err)))) from None
    finally:
        context.setLocalProperty("spark.job.description", previous)
    for executable, lacking in found:
        if lacking:
            raise SparkSetupError(workers_trouble(executable or python, "cannot import " + ", ".join(lacking)))
    _workers_checked.add(key)
