"""A local stand-in for the dataset hosts: an HTTP server on 127.0.0.1 serving files from memory,
and ``EHI_SOURCE_OVERRIDES`` pointing a source's published files at it.

The server runs in a daemon thread, answers only on the loopback interface, records every path
asked for (so a test sees that a second run downloads nothing) and shuts itself down when its
``with`` block ends or after :data:`LIFETIME_S` seconds, whichever comes first.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

LIFETIME_S = 600


class Served:
    def __init__(self, files: dict[str, bytes], server: ThreadingHTTPServer):
        self.files, self.requests = files, []
        self.url = f"http://127.0.0.1:{server.server_address[1]}/"

    def overrides(self, source: str, names: dict[str, str] | None = None) -> dict:
        """{source: {published filename: {url, md5}}} for the served files (``names``: published
        filename -> served path, where they differ)."""
        names = names or {f: f for f in self.files}
        return {source: {pub: {"url": self.url + path, "md5": hashlib.md5(self.files[path]).hexdigest()}
                         for pub, path in names.items()}}


@contextlib.contextmanager
def serve(files: dict[str, bytes], content_type: str = "application/octet-stream") -> Iterator[Served]:
    """Serve ``files`` ({path: bytes}) at ``http://127.0.0.1:<port>/<path>``."""
    holder: list[Served] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # http.server's name
            path = self.path.lstrip("/").split("?")[0]
            holder[0].requests.append(path)
            body = files.get(path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):  # keep the test output clean
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    holder.append(Served(files, server))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    deadline = threading.Timer(LIFETIME_S, server.shutdown)
    deadline.daemon = True
    deadline.start()
    try:
        yield holder[0]
    finally:
        deadline.cancel()
        server.shutdown()
        server.server_close()


def write_overrides(path: Path, *tables: dict) -> Path:
    merged = {}
    for table in tables:
        merged.update(table)
    path.write_text(json.dumps(merged))
    return path
