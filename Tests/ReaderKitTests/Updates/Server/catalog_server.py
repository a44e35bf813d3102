"""A small HTTP server for the update catalog tests, bound to 127.0.0.1 on a free port.

Usage: catalog_server.py ROOT

Prints "port N" once listening. Serves the files under ROOT at their relative paths (404 for anything
else), plus a few misbehaving paths:
  /stall              accepts the request and never answers (until the client gives up)
  /endless            200 without a Content-Length, then bytes forever (until the client hangs up)
  /huge               200 with a Content-Length of 1 GiB, then bytes until the client hangs up
  /status/N           answers with HTTP status N and a short body
The server exits when its standard input closes, so it cannot outlive the test that started it.
"""

import http.server
import os
import sys
import threading
import time

ROOT = os.path.realpath(sys.argv[1])
CHUNK = b"x" * 65536


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/stall":
            time.sleep(600)
            return
        if path in ("/endless", "/huge"):
            self.send_response(200)
            if path == "/huge":
                self.send_header("Content-Length", str(1 << 30))
            else:
                self.send_header("Connection", "close")
            self.end_headers()
            try:
                for _ in range(1 << 14):
                    self.wfile.write(CHUNK)
            except OSError:
                pass
            self.close_connection = True
            return
        if path.startswith("/status/"):
            status = int(path[len("/status/"):])
            self.answer(status, b"status %d\n" % status)
            return
        target = os.path.realpath(os.path.join(ROOT, path.lstrip("/")))
        if not target.startswith(ROOT + os.sep) or not os.path.isfile(target):
            self.answer(404, b"not found\n")
            return
        with open(target, "rb") as handle:
            self.answer(200, handle.read())

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


def main():
    server = Server(("127.0.0.1", 0), Handler)
    print("port %d" % server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # returns when the parent closes the pipe or exits
    os._exit(0)


if __name__ == "__main__":
    main()
