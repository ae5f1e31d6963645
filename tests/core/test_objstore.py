"""The object store contract, against a local directory and a real S3 server (SeaweedFS)."""

from __future__ import annotations

import hashlib
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from minio.error import S3Error

from kevolve.config import CommonSettings
from kevolve.objstore import LocalStore, ObjectNotFound, ObjectStore, ObjectStoreUnavailable, S3Store, open_store
from kevolve.client.natsd import free_port


if TYPE_CHECKING:
    from tests.shared.conftest import WeedS3

def _bucket() -> str:
    return f"t-{uuid.uuid4().hex[:16]}"


def _s3_settings(url: str, access: str = "kevolve", secret: str = "unused-secret", **extra: object) -> CommonSettings:
    """Settings as a pod gets them: the URL from a ConfigMap, the keys from a Secret's env."""
    return CommonSettings(objects_url=url, s3_access_key=access, s3_secret_key=secret, **extra)


@pytest.fixture(params=["local", "s3"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    """The same behaviour is required of both backends; each test gets an empty store."""
    if request.param == "local":
        return open_store(CommonSettings(objects_url=f"file://{tmp_path / 'objects'}"))
    weed: WeedS3 = request.getfixturevalue("weed_s3")
    return open_store(_s3_settings(weed.url(_bucket()), weed.access_key, weed.secret_key))


def _object_count(store: ObjectStore, prefix: str) -> int:
    if isinstance(store, LocalStore):
        return sum(1 for p in (store.root / prefix).rglob("*") if p.is_file())
    assert isinstance(store, S3Store)
    return sum(1 for _ in store.client.list_objects(store.bucket, prefix=f"{prefix}/", recursive=True))


def test_round_trip_returns_the_same_bytes(any_store: ObjectStore) -> None:
    data = b"import triton\n" + bytes(range(256)) * 64  # binary-safe, not only text
    key = any_store.put(data, "kernels", ".py")
    assert key == f"kernels/{hashlib.sha256(data).hexdigest()}.py"
    assert any_store.exists(key)
    assert any_store.get(key) == data


def test_retried_upload_gives_the_same_key_and_one_object(any_store: ObjectStore) -> None:
    first = any_store.put(b'{"verdict": "PASSED"}', "reports/eval", ".json")
    again = any_store.put(b'{"verdict": "PASSED"}', "reports/eval", ".json")
    other = any_store.put(b'{"verdict": "INCORRECT"}', "reports/eval", ".json")
    assert first == again != other
    assert _object_count(any_store, "reports/eval") == 2


def test_missing_key_raises_object_not_found(any_store: ObjectStore) -> None:
    missing = f"kernels/{'0' * 64}.py"
    assert not any_store.exists(missing)
    with pytest.raises(ObjectNotFound):
        any_store.get(missing)


@pytest.mark.parametrize("key", [
    "kernels/../../etc/passwd", "../kernels/x.py", "/etc/passwd", "kernels/..", "kernels",
    "Kernels/x.py", "kernels/a b.py", "kernels//x.py", "",
])
def test_keys_that_could_escape_the_store_are_rejected(any_store: ObjectStore, key: str) -> None:
    with pytest.raises(ValueError, match="invalid object key"):
        any_store.get(key)
    with pytest.raises(ValueError, match="invalid object key"):
        any_store.exists(key)


def test_a_prefix_with_dot_dot_cannot_write_outside(any_store: ObjectStore) -> None:
    with pytest.raises(ValueError):
        any_store.put(b"x", "../escape")
    with pytest.raises(ValueError):
        any_store.put(b"x", "kernels", "/../../escape")


def test_local_store_leaves_no_partial_files(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "objects")
    threads = [threading.Thread(target=store.put, args=(b"same bytes" * 1000, "kernels", ".py")) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    files = [p.name for p in (tmp_path / "objects" / "kernels").iterdir()]
    assert len(files) == 1 and not files[0].startswith(".tmp-")


def test_s3_credentials_in_the_url_work(weed_s3: WeedS3) -> None:
    bucket = _bucket()
    creds = f"{weed_s3.access_key}:{weed_s3.secret_key}"
    store = open_store(CommonSettings(objects_url=f"s3://{creds}@{weed_s3.endpoint}/{bucket}"))
    key = store.put(b"spec", "specs", ".py")
    # Another process with the Secret-style env credentials sees the same object.
    assert open_store(_s3_settings(weed_s3.url(bucket), weed_s3.access_key, weed_s3.secret_key)).get(key) == b"spec"


def test_s3_wrong_credentials_fail_at_once_with_the_server_reason(weed_s3: WeedS3) -> None:
    started = time.monotonic()
    with pytest.raises(S3Error) as info:
        open_store(_s3_settings(weed_s3.url(_bucket()), weed_s3.access_key, "not-the-secret"))
    assert info.value.code in {"SignatureDoesNotMatch", "InvalidAccessKeyId", "AccessDenied"}
    assert time.monotonic() - started < 5  # an auth error is not retried


def test_s3_url_must_name_one_bucket(weed_s3: WeedS3) -> None:
    for url in (f"s3://{weed_s3.endpoint}", f"s3://{weed_s3.endpoint}/a/b"):
        with pytest.raises(ValueError, match="exactly one bucket"):
            open_store(_s3_settings(url, weed_s3.access_key, weed_s3.secret_key))


def test_dead_s3_endpoint_fails_clearly_after_bounded_retries() -> None:
    port = free_port()  # nothing listens here: connection refused
    started = time.monotonic()
    with pytest.raises(ObjectStoreUnavailable, match=f"127.0.0.1:{port}.*unreachable after 4 attempts"):
        open_store(_s3_settings(f"s3://127.0.0.1:{port}/kevolve"))
    assert time.monotonic() - started < 20


@pytest.fixture
def silent_endpoint() -> Iterator[int]:
    """A TCP server that accepts connections and never answers (a blackholed S3)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def test_silent_s3_endpoint_times_out_instead_of_hanging(silent_endpoint: int) -> None:
    started = time.monotonic()
    with pytest.raises(ObjectStoreUnavailable, match="unreachable"):
        open_store(_s3_settings(f"s3://127.0.0.1:{silent_endpoint}/kevolve", s3_timeout_s=0.25))
    # 4 attempts x (0.25 s read timeout, one urllib3 retry) plus backoff: seconds, not minutes.
    assert time.monotonic() - started < 15


def test_a_named_object_is_found_again_by_its_name_and_replaced(any_store: ObjectStore) -> None:
    """put_at: a cache entry under a key derived from what it is for (a job's reference run)."""
    assert any_store.put_at("refcache/abc.tar", b"first") == "refcache/abc.tar"
    assert any_store.get("refcache/abc.tar") == b"first"
    any_store.put_at("refcache/abc.tar", b"second")
    assert any_store.get("refcache/abc.tar") == b"second"
    with pytest.raises(ValueError):
        any_store.put_at("../escape", b"x")


def test_prune_keeps_a_cache_prefix_within_its_bytes_newest_first(any_store: ObjectStore) -> None:
    """Shared reference runs are a cache: past its byte budget the oldest go, and nothing
    outside the pruned prefix (kernels, reports) is touched."""
    kernel = any_store.put(b"kernel source", "kernels", ".py")
    for name in ("a", "b", "c"):
        any_store.put_at(f"refcache/{name}.tar", bytes(100))
        time.sleep(1.1)  # S3 keeps write times to the second
    assert any_store.prune("refcache", keep_s=3600, keep_bytes=250) == 1
    assert not any_store.exists("refcache/a.tar")
    assert any_store.exists("refcache/b.tar") and any_store.exists("refcache/c.tar")
    assert any_store.prune("refcache", keep_s=3600, keep_bytes=250) == 0
    assert any_store.get(kernel) == b"kernel source"


def test_prune_removes_what_outlived_its_age(any_store: ObjectStore) -> None:
    any_store.put_at("refcache/old.tar", b"x")
    any_store.put_at("refcache/deep/other.tar", b"y")
    time.sleep(1.1)
    assert any_store.prune("refcache", keep_s=0, keep_bytes=2**40) == 2
    assert _object_count(any_store, "refcache") == 0
    assert any_store.prune("refcache", keep_s=0, keep_bytes=2**40) == 0  # nothing left, no error


@pytest.mark.parametrize("prefix", ["", "../up", "/abs", "refcache/../.."])
def test_prune_refuses_a_prefix_that_leaves_the_store(any_store: ObjectStore, prefix: str) -> None:
    with pytest.raises(ValueError):
        any_store.prune(prefix, keep_s=0, keep_bytes=0)
