"""A Spark session that works out of the box, and cdckit on its executors.

``get_spark()`` checks for Java 17+ before starting the JVM (and says what to
install when it is missing), starts a quiet local session (or reuses the
active one), and makes sure executors can import cdckit: on a cluster whose
workers do not have it installed, cdckit ships itself as a zip (``addPyFile``).

>>> java_major('openjdk version "17.0.15" 2025-04-15'), java_major('java version "1.8.0_392"')
(17, 8)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from ..errors import SparkSetupError

__all__ = ["get_spark", "check_java", "java_major", "ship_cdckit", "LOG4J2_CONFIG", "MINIMUM_JAVA"]

#: The quiet logging configuration the driver JVM is started with.
LOG4J2_CONFIG = Path(__file__).with_name("log4j2.properties")
MINIMUM_JAVA = 17

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


def get_spark(master: str = "local[*]", app_name: str = "cdckit", config: dict[str, Any] | None = None) -> Any:
    """The active Spark session, or a new quiet one (UTC, UI and progress bars off).

    ``config`` adds or overrides Spark settings for a new session. Before a
    JVM is started, Java is checked (:func:`check_java`), ``SPARK_LOCAL_IP``
    and ``PYSPARK_PYTHON`` get defaults (loopback, this interpreter).
    """
    from pyspark.sql import SparkSession

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
    settings.update(config or {})
    builder = SparkSession.builder.master(master).appName(app_name)
    for name, value in settings.items():
        builder = builder.config(name, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    ship_cdckit(spark)
    return spark


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
