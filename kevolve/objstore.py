"""Object store for kernel sources, prompts and reports: a local directory or S3 (MinIO, SeaweedFS).

Keys are content-addressed (``<prefix>/<sha256><suffix>``), so a retried upload writes the
same key and is harmless, and a key in a message always names exactly the bytes it had.
Calls are synchronous (minio is); async callers wrap them in ``asyncio.to_thread``.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import ParamSpec, Protocol, TypeVar
from urllib.parse import parse_qs, unquote, urlparse

import certifi
import urllib3
from minio import Minio
from minio.deleteobjects import DeleteObject
from minio.error import S3Error
from tenacity import retry, retry_if_exception_type, stop_after_attempt, stop_after_delay, wait_exponential

from kevolve.config import CommonSettings

_KEY = re.compile(r"^[a-z0-9_-]+(/[A-Za-z0-9._-]+)+$")


class ObjectNotFound(KeyError):
    """The key names no object."""


class ObjectStoreUnavailable(ConnectionError):
    """The S3 endpoint could not be reached (refused, timed out, reset) after bounded retries."""


def content_key(data: bytes, prefix: str, suffix: str = "") -> str:
    return f"{prefix}/{hashlib.sha256(data).hexdigest()}{suffix}"


def check_key(key: str) -> str:
    """Reject keys that could escape the store (``..``, absolute paths, odd characters)."""
    if not _KEY.match(key) or ".." in key.split("/"):
        raise ValueError(f"invalid object key {key!r}")
    return key


@dataclass(frozen=True)
class StoredObject:
    """One object under a prefix, as a listing gives it: what pruning decides on."""

    key: str
    size: int
    modified: float  # seconds since the epoch of its last write


def doomed(objects: Iterable[StoredObject], keep_s: float, keep_bytes: int, now: float) -> list[str]:
    """The keys a prune removes: every object written more than ``keep_s`` ago, then the
    oldest of the rest until they hold at most ``keep_bytes`` together."""
    fresh: list[StoredObject] = []
    old: list[str] = []
    for obj in objects:
        if now - obj.modified > keep_s:
            old.append(obj.key)
        else:
            fresh.append(obj)
    total = sum(obj.size for obj in fresh)
    for obj in sorted(fresh, key=lambda o: o.modified):
        if total <= keep_bytes:
            break
        old.append(obj.key)
        total -= obj.size
    return old


def check_prefix(prefix: str) -> str:
    """A prefix is a key's folders: the same rules, so a prune stays inside the store."""
    check_key(f"{prefix}/x")
    return prefix


class ObjectStore(Protocol):
    def put(self, data: bytes, prefix: str, suffix: str = "") -> str: ...
    def put_at(self, key: str, data: bytes) -> str: ...
    def get(self, key: str) -> bytes: ...
    def exists(self, key: str) -> bool: ...
    def prune(self, prefix: str, keep_s: float, keep_bytes: int) -> int: ...


class LocalStore:
    """A directory; writes are atomic (temp file + rename) so readers never see half an object."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)

    def put(self, data: bytes, prefix: str, suffix: str = "") -> str:
        key = check_key(content_key(data, prefix, suffix))
        if (self.root / key).exists():
            return key
        return self.put_at(key, data)

    def put_at(self, key: str, data: bytes) -> str:
        """``data`` under a key the caller names (a cache entry found again by what it is for),
        replacing what was there."""
        path = self.root / check_key(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
        return key

    def get(self, key: str) -> bytes:
        path = self.root / check_key(key)
        try:
            return path.read_bytes()
        except FileNotFoundError as exc:
            raise ObjectNotFound(key) from exc

    def exists(self, key: str) -> bool:
        return (self.root / check_key(key)).exists()

    def prune(self, prefix: str, keep_s: float, keep_bytes: int) -> int:
        """Remove what :func:`doomed` picks under ``prefix`` (a cache's, never the
        content-addressed records); returns how many went. Objects another writer removes
        meanwhile are skipped."""
        base = self.root / check_prefix(prefix)
        objects = []
        for path in base.rglob("*"):
            if path.is_file() and not path.name.startswith(".tmp-"):
                try:
                    st = path.stat()
                except FileNotFoundError:
                    continue
                objects.append(StoredObject(str(path.relative_to(self.root)), st.st_size, st.st_mtime))
        removed = 0
        for key in doomed(objects, keep_s, keep_bytes, time.time()):
            try:
                (self.root / key).unlink()
                removed += 1
            except FileNotFoundError:
                pass
        return removed


# Network failures surface from minio as urllib3 errors (MaxRetryError, ProtocolError...),
# which are not OSErrors; both kinds are transient. Retrying a put is safe: keys are
# content-addressed. The attempt and delay caps bound how long a dead endpoint can stall a
# caller; the per-request timeout (KEVOLVE_S3_TIMEOUT_S) bounds each attempt.
_NETWORK_ERRORS = (OSError, urllib3.exceptions.HTTPError)
_ATTEMPTS = 4

P = ParamSpec("P")
R = TypeVar("R")


def _transient(fn: Callable[P, R]) -> Callable[P, R]:
    retrying = retry(
        retry=retry_if_exception_type(_NETWORK_ERRORS),
        wait=wait_exponential(multiplier=0.2, max=5),
        stop=stop_after_attempt(_ATTEMPTS) | stop_after_delay(120),
        reraise=True,
    )(fn)

    @wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return retrying(*args, **kwargs)
        except ObjectStoreUnavailable:
            raise
        except _NETWORK_ERRORS as exc:
            store = args[0] if args else None
            where = getattr(store, "where", "the S3 endpoint")
            raise ObjectStoreUnavailable(
                f"object store {where} unreachable after {_ATTEMPTS} attempts ({fn.__name__}): {exc}"
            ) from exc

    return call


class S3Store:
    """A bucket on any S3-compatible server through the minio client, with retries."""

    def __init__(self, client: Minio, bucket: str, endpoint: str = "") -> None:
        self.client = client
        self.bucket = bucket
        self.where = f"s3://{endpoint}/{bucket}" if endpoint else f"bucket {bucket!r}"
        self._ensure_bucket()

    @_transient
    def _ensure_bucket(self) -> None:
        if not self.client.bucket_exists(self.bucket):
            try:
                self.client.make_bucket(self.bucket)
            except S3Error as exc:
                if exc.code not in {"BucketAlreadyOwnedByYou", "BucketAlreadyExists"}:
                    raise

    @_transient
    def put(self, data: bytes, prefix: str, suffix: str = "") -> str:
        return self.put_at(content_key(data, prefix, suffix), data)

    @_transient
    def put_at(self, key: str, data: bytes) -> str:
        """``data`` under a key the caller names, replacing what was there."""
        self.client.put_object(self.bucket, check_key(key), io.BytesIO(data), length=len(data))
        return key

    @_transient
    def get(self, key: str) -> bytes:
        try:
            response = self.client.get_object(self.bucket, check_key(key))
        except S3Error as exc:
            if exc.code in {"NoSuchKey", "NoSuchObject"}:
                raise ObjectNotFound(key) from exc
            raise
        try:
            return response.read()
        finally:
            response.close()
            response.release_conn()

    @_transient
    def exists(self, key: str) -> bool:
        try:
            self.client.stat_object(self.bucket, check_key(key))
        except S3Error as exc:
            if exc.code in {"NoSuchKey", "NoSuchObject", "NotFound"}:
                return False
            raise
        return True

    @_transient
    def prune(self, prefix: str, keep_s: float, keep_bytes: int) -> int:
        """Remove what :func:`doomed` picks under ``prefix``, in batched deletes; returns how
        many went (a key already gone counts as gone)."""
        listed = self.client.list_objects(self.bucket, prefix=f"{check_prefix(prefix)}/", recursive=True)
        objects = [StoredObject(o.object_name, o.size or 0, o.last_modified.timestamp() if o.last_modified else 0.0)
                   for o in listed if o.object_name and not o.is_dir]
        keys = doomed(objects, keep_s, keep_bytes, time.time())
        if not keys:
            return 0
        errors = list(self.client.remove_objects(self.bucket, (DeleteObject(k) for k in keys)))
        failed = [e for e in errors if e.code not in {"NoSuchKey", "NoSuchObject"}]
        if failed:
            raise RuntimeError(f"object store {self.where} refused to delete {failed[0].name!r}: "
                               f"{failed[0].code} {failed[0].message}")
        return len(keys)


def open_store(settings: CommonSettings) -> ObjectStore:
    """Build the store named by KEVOLVE_OBJECTS_URL.

    ``s3://[ACCESS:SECRET@]host:port/bucket[?secure=true]``; credentials may instead come
    from KEVOLVE_S3_ACCESS_KEY / KEVOLVE_S3_SECRET_KEY (the form a Kubernetes Secret gives).
    """
    url = urlparse(settings.objects_url)
    if url.scheme == "s3":
        bucket = url.path.strip("/")
        if not bucket or "/" in bucket:
            raise ValueError(f"s3 objects URL needs exactly one bucket: {settings.objects_url!r}")
        secure = parse_qs(url.query).get("secure", [str(settings.s3_secure)])[0].lower() in {"1", "true", "yes"}
        access = unquote(url.username or "") or settings.s3_access_key
        secret = unquote(url.password or "") or settings.s3_secret_key
        timeout = settings.s3_timeout_s
        # One quick urllib3 retry for 5xx answers; connection-level retries are _transient's,
        # so the total wait stays bounded (minio's default client retries 5x with 5-minute
        # timeouts).
        http = urllib3.PoolManager(
            timeout=urllib3.Timeout(connect=min(timeout, 10.0), read=timeout),
            maxsize=10,
            # TLS verification exactly as minio's own client does it.
            cert_reqs="CERT_REQUIRED",
            ca_certs=os.environ.get("SSL_CERT_FILE") or certifi.where(),
            retries=urllib3.Retry(total=1, backoff_factor=0.2, status_forcelist=[500, 502, 503, 504]),
        )
        endpoint = f"{url.hostname}:{url.port or (443 if secure else 80)}"
        client = Minio(endpoint, access_key=access, secret_key=secret, secure=secure, http_client=http)
        return S3Store(client, bucket, endpoint)
    path = Path(url.path if url.scheme == "file" else settings.objects_url)
    return LocalStore(path)
