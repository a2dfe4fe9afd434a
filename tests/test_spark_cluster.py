"""cdckit on a real Spark standalone cluster (master and worker on 127.0.0.1) whose Python lacks cdckit.

The worker's Python is this environment's interpreter started without its
site hooks, so pandas, pyarrow and the rest import but the editable cdckit
install does not: cdckit must ship itself (addPyFile) for the decode to work.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pyspark
import pytest

HERE = Path(__file__).resolve().parent
STARTUP_SECONDS = 90


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.5)
    return False


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A master and one worker; yields the master URL, skips with the reason when they cannot start."""
    try:
        from cdckit.spark import check_java

        check_java()
    except Exception as err:  # no Java here: the one case where the cluster cannot start
        pytest.skip(f"no standalone cluster: {err}")
    home = Path(pyspark.__file__).parent
    spark_class = home / "bin" / "spark-class"
    work = tmp_path_factory.mktemp("spark-cluster")
    worker_python = work / "python-without-cdckit"
    worker_python.write_text(f"#!/bin/sh\nexec {sys.executable} -S \"$@\"\n")
    worker_python.chmod(0o755)
    env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1",
               PYTHONPATH=sysconfig.get_paths()["purelib"])
    master_port, worker_port = free_port(), free_port()
    logs = []
    master_log = open(work / "master.log", "w")
    logs.append(master_log)
    master = subprocess.Popen([str(spark_class), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(master_port), "--webui-port", str(free_port())],
                              env=env, stdout=master_log, stderr=subprocess.STDOUT)
    processes = [master]
    try:
        if not wait_for_port(master_port, master, STARTUP_SECONDS):
            pytest.skip(f"the Spark master did not start; see {work / 'master.log'}")
        url = f"spark://127.0.0.1:{master_port}"
        worker_log = open(work / "worker.log", "w")
        logs.append(worker_log)
        worker = subprocess.Popen([str(spark_class), "org.apache.spark.deploy.worker.Worker", url,
                                   "--host", "127.0.0.1", "--port", str(worker_port), "--cores", "1",
                                   "--memory", "1g", "--webui-port", str(free_port()), "--work-dir", str(work)],
                                  env=env, stdout=worker_log, stderr=subprocess.STDOUT)
        processes.append(worker)
        if not wait_for_port(worker_port, worker, STARTUP_SECONDS):
            pytest.skip(f"the Spark worker did not start; see {work / 'worker.log'}")
        yield url, worker_python, work
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        for log in logs:
            log.close()


def test_decoding_on_a_standalone_cluster_ships_cdckit_and_matches_pandas(cluster):
    url, worker_python, work = cluster
    env = dict(os.environ, PYSPARK_PYTHON=str(worker_python), PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1")
    done = subprocess.run([sys.executable, str(HERE / "spark_cluster_job.py"), url, "datahub_blob/shop"],
                          env=env, capture_output=True, text=True, timeout=600, cwd=work)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, f"the driver failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    result = json.loads(lines[0][len("RESULT "):])
    assert result["importable_before_shipping"] is False  # the workers really lack cdckit
    assert result["shipped"] is True
    assert result["executor_no_site"] == 1  # the executors ran the interpreter without site hooks
    assert sorted(map(tuple, result["spark"]), key=repr) == sorted(map(tuple, result["pandas"]), key=repr)
    assert result["report"]["quarantined"] == 0 and result["report"]["events"] == len(result["pandas"])
