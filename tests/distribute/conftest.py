"""Clusters of real task processes on 127.0.0.1 with free ports, stopped by pid."""
import json
import os
import subprocess
import sys
import time

import pytest

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "src")

_TASK = ("import json, sys; sys.path.insert(0, %r); import tensorweave as tf; "
         "config = tf.ConfigProto(**json.loads(sys.argv[4])); "
         "tf.train.Server(json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3]), "
         "config=config).join()" % SRC)


def _wait_ready(address: str, proc, timeout: float = 30.0, ca: str = None) -> None:
    import grpc
    deadline = time.monotonic() + timeout
    if ca:
        with open(ca, "rb") as f:
            creds = grpc.ssl_channel_credentials(root_certificates=f.read())
        channel = grpc.secure_channel(address, creds)
    else:
        channel = grpc.insecure_channel(address)
    with channel:
        while True:
            try:
                grpc.channel_ready_future(channel).result(timeout=0.5)
                return
            except grpc.FutureTimeoutError:
                if proc.poll() is not None:
                    raise RuntimeError("task process exited with %s" % proc.returncode)
                if time.monotonic() > deadline:
                    raise RuntimeError("task at %s did not come up" % address)


class Cluster:
    """Task processes of one cluster spec: `start()` launches them all."""

    def __init__(self, jobs: dict, config: dict = None, env: dict = None):
        from tensorweave.distribute.server import free_port
        self.spec = {job: ["localhost:%d" % free_port() for _ in range(n)]
                     for job, n in jobs.items()}
        self.config = config or {}
        self.env = dict(os.environ, **(env or {}))
        self.procs = {}

    def target(self, job: str = "worker", index: int = 0) -> str:
        return "grpc://" + self.spec[job][index]

    def start_task(self, job: str, index: int):
        p = subprocess.Popen([sys.executable, "-c", _TASK, json.dumps(self.spec), job,
                              str(index), json.dumps(self.config)], env=self.env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs[(job, index)] = p
        return p

    def start(self) -> "Cluster":
        for job, addrs in self.spec.items():
            for i in range(len(addrs)):
                self.start_task(job, i)
        for (job, i), p in self.procs.items():
            _wait_ready(self.spec[job][i], p, ca=self.env.get("TW_TLS_CERT"))
        return self

    def wait_task(self, job: str, index: int) -> None:
        """Waits until task (job, index) answers."""
        _wait_ready(self.spec[job][index], self.procs[(job, index)],
                    ca=self.env.get("TW_TLS_CERT"))

    def kill(self, job: str, index: int) -> None:
        p = self.procs.pop((job, index))
        p.kill()
        p.wait(timeout=10)

    def stop(self) -> None:
        for p in self.procs.values():
            p.kill()
        for p in self.procs.values():
            p.wait(timeout=10)
        self.procs.clear()


@pytest.fixture
def make_cluster():
    """A factory of started Clusters, all stopped after the test."""
    made = []

    def make(jobs: dict, config: dict = None, env: dict = None) -> Cluster:
        c = Cluster(jobs, config, env)
        made.append(c)
        return c.start()
    yield make
    for c in made:
        c.stop()


@pytest.fixture(scope="module")
def ps_workers():
    """One ps task and two workers, shared by a module's tests."""
    c = Cluster({"ps": 1, "worker": 2}).start()
    yield c
    c.stop()
