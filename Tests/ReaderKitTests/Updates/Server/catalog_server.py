"""A small HTTP server for the update catalog tests, bound to 127.0.0.1 on a free port.

Usage: catalog_server.py [--tls]

Makes a temporary directory ROOT and prints "port N root ROOT" once listening; with --tls, also
serves the same over HTTPS and prints "port N tls T expired E self-signed S ca CA root ROOT": T
presents a certificate for DNS:localhost issued by a CA made for this run (its certificate in the PEM
file CA), E the same but expired, S a self-signed one for DNS:localhost. The certificates are made with
the openssl command-line tool in a temporary directory, removed on exit; without that tool, --tls
prints the first form. Serves the files under
ROOT at their relative paths (404 for anything else). A path whose last segments are one of these
misbehaves instead (PREFIX is whatever comes before, so tests running side by side do not meet):
  PREFIX/stall               accepts the request and never answers (until the client hangs up)
  PREFIX/trickle/MS          200 with a Content-Length of 100000, then one byte every MS milliseconds
                             (until the client hangs up)
  PREFIX/open                "open N": how many stall and trickle connections under PREFIX the
                             clients have not closed yet
  PREFIX/raw/NAME            one of the hostile answers in RAW below, as it is, then closes
  PREFIX/count/PATH          "count N": how many requests PREFIX/PATH has had
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
import select
import shutil
import socketserver
import sys
import tempfile
import socket as socket_module
import ssl
import subprocess
import threading
import time

ROOT = os.path.realpath(tempfile.mkdtemp(prefix="catalog-server-"))
CHUNK = b"x" * 65536
ENDLESS = {}  # prefix -> {"done": Event, "sent": int}
LOCK = threading.Lock()
OPEN = {}  # prefix -> stall and trickle connections not closed by the client yet
COUNTS = {}  # path -> requests
RAW = {
    "chunk-negative": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\nx\r\n0\r\n\r\n",
    "chunk-signed": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+2\r\n{}\r\n0\r\n\r\n",
    "chunk-huge": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\nx\r\n0\r\n\r\n",
    "chunk-bad-trailer": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nnot a field\r\n\r\n",
    "junk-status": b"SSH-2.0-OpenSSH_9.2\r\n\r\n",
    "signed-status": b"HTTP/1.1 +200 OK\r\nContent-Length: 2\r\n\r\n{}",
    "length-negative": b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n{}",
    "length-disagree": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    "no-colon": b"HTTP/1.1 200 OK\r\nthis is not a field\r\nContent-Length: 2\r\n\r\n{}",
}


def track(prefix, delta):
    with LOCK:
        OPEN[prefix] = OPEN.get(prefix, 0) + delta


def closed_by_client(connection, timeout):
    """Waits up to `timeout` seconds; True once the client has closed its side."""
    readable, _, _ = select.select([connection], [], [], timeout)
    if not readable:
        return False
    if isinstance(connection, ssl.SSLSocket):
        return True  # after its request a client sends nothing but its close
    try:
        return connection.recv(4096, socket_module.MSG_PEEK) == b""
    except OSError:
        return True


def endless_state(prefix):
    with LOCK:
        return ENDLESS.setdefault(prefix, {"done": threading.Event(), "sent": 0})


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def setup(self):
        if isinstance(self.request, ssl.SSLSocket):
            self.request.settimeout(30)
            try:
                self.request.do_handshake()
            finally:
                self.request.settimeout(None)
        super().setup()

    def handle(self):
        try:
            super().handle()
        except (OSError, ssl.SSLError):
            self.close_connection = True

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        with LOCK:
            COUNTS[path] = COUNTS.get(path, 0) + 1
        if "/count/" in path:
            counted = path.replace("/count/", "/", 1)
            with LOCK:
                count = COUNTS.get(counted, 0)
            self.answer(200, b"count %d\n" % count)
            return
        prefix, _, last = path.rpartition("/")
        if last == "stall":
            track(prefix, 1)
            try:
                deadline = time.monotonic() + 600
                while time.monotonic() < deadline and not closed_by_client(self.connection, 0.05):
                    pass
            finally:
                track(prefix, -1)
            self.close_connection = True
            return
        if prefix.endswith("/trickle") and last.isdigit():
            self.trickle(prefix[: -len("/trickle")], int(last) / 1000)
            return
        if last == "open":
            with LOCK:
                count = OPEN.get(prefix, 0)
            self.answer(200, b"open %d\n" % count)
            return
        if prefix.endswith("/raw") and last in RAW:
            self.wfile.write(RAW[last])
            self.wfile.flush()
            self.close_connection = True
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

    def trickle(self, prefix, interval):
        track(prefix, 1)
        try:
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
            self.wfile.flush()
            for _ in range(100000):
                if closed_by_client(self.connection, interval):
                    break
                self.wfile.write(b"x")
                self.wfile.flush()
        except OSError:
            pass
        finally:
            track(prefix, -1)
        self.close_connection = True

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


class TLSServer(Server):
    """Server over TLS; the handshake happens in the request's thread (Handler.setup)."""

    def __init__(self, address, handler, certificate, key):
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(certificate, key)
        super().__init__(address, handler)

    def get_request(self):
        connection, address = self.socket.accept()
        return self.context.wrap_socket(connection, server_side=True, do_handshake_on_connect=False), address

    def handle_error(self, request, client_address):
        pass  # a client that refuses the certificate ends its handshake; nothing to report


def openssl(*arguments, cwd):
    subprocess.run(["openssl", *arguments], cwd=cwd, check=True, capture_output=True)


def make_certificates(directory):
    """The CA, a certificate it issues for localhost, an expired one, and a self-signed one."""
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    with open(os.path.join(directory, "localhost.ext"), "w") as handle:
        handle.write("subjectAltName=DNS:localhost\n")
    openssl("req", "-x509", *key, "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=ReaderKit test CA",
            "-days", "2", cwd=directory)
    openssl("req", *key, "-keyout", "localhost.key", "-out", "localhost.csr", "-subj", "/CN=localhost",
            cwd=directory)
    for name, days in (("localhost", "2"), ("expired", "-1")):
        openssl("x509", "-req", "-in", "localhost.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial",
                "1" if days == "2" else "2", "-days", days, "-extfile", "localhost.ext", "-out", name + ".pem",
                cwd=directory)
    openssl("req", "-x509", *key, "-keyout", "self-signed.key", "-out", "self-signed.pem", "-subj",
            "/CN=localhost", "-addext", "subjectAltName=DNS:localhost", "-days", "2", cwd=directory)


def serve(server):
    threading.Thread(target=server.serve_forever, daemon=True).start()


def main():
    server = Server(("127.0.0.1", 0), Handler)
    serve(server)
    certificates = None
    try:
        if "--tls" in sys.argv[1:]:
            certificates = tempfile.mkdtemp(prefix="catalog-server-tls-")
            try:
                make_certificates(certificates)
            except (OSError, subprocess.CalledProcessError) as error:
                print("catalog_server.py: no https: cannot make certificates: %s" % error, file=sys.stderr)
                sys.argv.remove("--tls")
        if "--tls" in sys.argv[1:]:
            ports = []
            for certificate, key in (("localhost", "localhost"), ("expired", "localhost"),
                                     ("self-signed", "self-signed")):
                tls = TLSServer(("127.0.0.1", 0), Handler, os.path.join(certificates, certificate + ".pem"),
                                os.path.join(certificates, key + ".key"))
                serve(tls)
                ports.append(tls.server_address[1])
            print("port %d tls %d expired %d self-signed %d ca %s root %s" % (
                server.server_address[1], *ports, os.path.join(certificates, "ca.pem"), ROOT), flush=True)
        else:
            print("port %d root %s" % (server.server_address[1], ROOT), flush=True)
        sys.stdin.read()  # returns when the parent closes the pipe or exits
    finally:
        shutil.rmtree(ROOT, ignore_errors=True)
        if certificates:
            shutil.rmtree(certificates, ignore_errors=True)
        os._exit(0)


if __name__ == "__main__":
    main()
