"""Builds small npm-style tarballs for the cache's unit tests (no network: the tests make
their own packages and, where a registry is needed, serve them from a loopback server)."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def tarball(files: dict[str, bytes | str], top: str = "package", extra: list[tarfile.TarInfo] | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for path, data in files.items():
            b = data.encode() if isinstance(data, str) else data
            info = tarfile.TarInfo(f"{top}/{path}" if top else path)
            info.size = len(b)
            tf.addfile(info, io.BytesIO(b))
        for info in extra or []:
            tf.addfile(info)
    return gzip.compress(buf.getvalue())


def sri(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def package(name: str, version: str, files: dict[str, str] | None = None, **pkg_fields) -> bytes:
    pj = {"name": name, "version": version, **pkg_fields}
    return tarball({"package.json": json.dumps(pj), **(files or {})})


class Registry:
    """A loopback npm registry: packuments at /NAME, tarballs at /-/NAME-VER.tgz."""

    def __init__(self):
        self.docs: dict[str, dict] = {}
        self.blobs: dict[str, bytes] = {}
        outer = self

        class H(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                path = self.path.split("?")[0].lstrip("/").replace("%2F", "/").replace("%2f", "/")
                if path in outer.blobs:
                    body, ctype = outer.blobs[path], "application/octet-stream"
                elif path in outer.docs:
                    body, ctype = json.dumps(outer.docs[path]).encode(), "application/json"
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def publish(
        self, name: str, version: str, tgz: bytes, *, integrity: str | None = None, latest: bool = True
    ) -> None:
        key = f"-/{name}-{version}.tgz"
        self.blobs[key] = tgz
        doc = self.docs.setdefault(name, {"name": name, "versions": {}, "dist-tags": {}})
        doc["versions"][version] = {
            "name": name,
            "version": version,
            "dist": {"tarball": f"{self.url}/{key}", "integrity": integrity or sri(tgz)},
        }
        if latest:
            doc["dist-tags"]["latest"] = version

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
