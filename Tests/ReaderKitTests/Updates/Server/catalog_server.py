"""A small HTTP server for the update catalog tests, bound to 127.0.0.1 on a free port.

Usage: catalog_server.py

Makes a temporary directory ROOT and prints "port N root ROOT" once listening. Serves the files under
ROOT at their relative paths (404 for anything else). A path whose last segments are one of these
misbehaves instead (PREFIX is whatever comes before, so tests running side by side do not meet):
  PREFIX/stall               accepts the request and never answers (until the client gives up)
  PREFIX/endless             200 without a Content-Length, then up to 1 GiB (until the client hangs up)
  PREFIX/endless-progress    "sending N" while PREFIX/endless is still sending, "done N" once it is
                             over, N being the body bytes sent so far
  PREFIX/huge                200 with a Content-Length of 1 GiB, then bytes until the client hangs up
  PREFIX/status/N            answers with HTTP status N and a short body
  PREFIX/chunked/FILE        serves PREFIX/FILE with chunked transfer encoding, 1000 bytes a chunk
The server exits, removing ROOT, when its standard input closes, so it cannot outlive the test
process that started it.
"""

import http.server
import os
import shutil
import socketserver
import sys
import tempfile
import threading
import time

ROOT = os.path.realpath(tempfile.mkdtemp(prefix="catalog-server-"))
CHUNK = b"x" * 65536
ENDLESS = {}  # prefix -> {"done": Event, "sent": int}
LOCK = threading.Lock()


def endless_state(prefix):
    with LOCK:
        return ENDLESS.setdefault(prefix, {"done": threading.Event(), "sent": 0})


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        prefix, _, last = path.rpartition("/")
        if last == "stall":
            time.sleep(600)
            return
        if last in ("endless", "huge"):
            self.stream(endless_state(prefix) if last == "endless" else None)
            return
        if last == "endless-progress":
            state = endless_state(prefix)
            status = b"done" if state["done"].is_set() else b"sending"
            self.answer(200, b"%s %d\n" % (status, state["sent"]))
            return
        if prefix.endswith("/status") and last.isdigit():
            self.answer(int(last), b"status %s\n" % last.encode())
            return
        chunked = "/chunked/" in path
        target = os.path.realpath(os.path.join(ROOT, path.replace("/chunked/", "/", 1).lstrip("/")))
        if not target.startswith(ROOT + os.sep) or not os.path.isfile(target):
            self.answer(404, b"not found\n")
            return
        with open(target, "rb") as handle:
            body = handle.read()
        if not chunked:
            self.answer(200, body)
            return
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for start in range(0, len(body), 1000):
            piece = body[start:start + 1000]
            self.wfile.write(b"%x;piece=%d\r\n%s\r\n" % (len(piece), start, piece))
        self.wfile.write(b"0\r\n\r\n")

    def stream(self, state):
        self.send_response(200)
        if state is None:
            self.send_header("Content-Length", str(1 << 30))
        else:
            self.send_header("Connection", "close")
        self.end_headers()
        try:
            for _ in range(1 << 14):
                self.wfile.write(CHUNK)
                if state is not None:
                    state["sent"] += len(CHUNK)
        except OSError:
            pass
        if state is not None:
            state["done"].set()
        self.close_connection = True

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def server_bind(self):
        # HTTPServer.server_bind looks the host name up (getfqdn), which can take a while; not needed.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]


def main():
    server = Server(("127.0.0.1", 0), Handler)
    print("port %d root %s" % (server.server_address[1], ROOT), flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        sys.stdin.read()  # returns when the parent closes the pipe or exits
    finally:
        shutil.rmtree(ROOT, ignore_errors=True)
        os._exit(0)


if __name__ == "__main__":
    main()
