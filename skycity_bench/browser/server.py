"""The bench's loopback origin: serves the demo document, and nothing else, over HTTP on
127.0.0.1 (never file://, so the demo runs with an ordinary web origin and cannot read
local files). Every other request is answered by the request router (network.py) before it
reaches this server; this server answers 404 to anything that still arrives.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DOC_PATH = "/index.html"


class DemoServer:
    def __init__(self, html: bytes):
        self.html = html
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's naming)
                if self.path.split("?")[0] in (DOC_PATH, "/"):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Cache-Control", "no-store")
                    self.send_header("Content-Length", str(len(outer.html)))
                    self.end_headers()
                    self.wfile.write(outer.html)
                else:
                    self.send_error(404)

            def log_message(self, *args):  # keep the terminal clean
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self.url = self.origin + DOC_PATH
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> DemoServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
