#!/usr/bin/env python3
"""Virtual NFC tags for pcscd's vpcd reader, in the Python standard library only.

vpcd (vsmartcard-vpcd) makes pcscd listen on TCP port 35963 (reader "Virtual PCD 00 00") and 35964
("Virtual PCD 00 01"); a card is a client connected to that port. Every message is a 2-byte big-endian
length and that many bytes: one byte is a control code (0 power off, 1 power on, 2 reset, 4 get ATR,
answered with the ATR), more is a command APDU, answered with a response APDU. Closing the connection
takes the card away.

The process is driven by JSON lines on standard input, each answered by one JSON line on standard
output, so one process can present many cards, one after another or in both readers:

  {"cmd": "present", "port": 35963, "card": {...}}  -> {"ok": true}
  {"cmd": "remove", "port": 35963}                  -> {"ok": true}
  {"cmd": "state", "port": 35963}                   -> {"ok": true, "message": "hex", "apdus": N, ...}
  {"cmd": "quit"}                                   -> {"ok": true}, then exit

A card is {"type": "t4" | "t2", "message": "hex" | null (unformatted), ...} with, optionally:
  t4: "fileSize" (2048), "mle" (255), "mlc" (255), "readOnly", "lockable" (true), "v1" (only the
      version 1 AID), "container": "hex" (answered instead of the real one), "nlen": N (NLEN to claim)
  t2: "dataSize" (144, an NTAG213's), "readOnly"
  both: "leaveAfter": N (the connection closes instead of answering APDU number N, from 1: a tag that
        leaves mid-read), "stallAfter": N (APDU number N is never answered: a tag that stops answering),
        "refuse": {"B0": "6F00"} (status words answered for an instruction byte).
The process ends when its standard input closes; every card goes with it.
"""

import json
import socket
import struct
import sys
import threading

TCP_QUICKACK = getattr(socket, "TCP_QUICKACK", 12)
ISO_DEP_ATR = bytes.fromhex("3B8180018080")
ULTRALIGHT_ATR = bytes.fromhex("3B8F8001804F0CA0000003060300030000000068")


def sw(word):
    return bytes([word >> 8, word & 0xFF])


class Type4Tag:
    """An NFC Forum Type 4 tag: the NDEF application, its capability container and NDEF file."""

    atr = ISO_DEP_ATR

    def __init__(self, spec):
        message = spec.get("message")
        self.formatted = message is not None
        message = bytes.fromhex(message or "")
        self.file_size = spec.get("fileSize", 2048)
        length = spec.get("nlen", len(message))
        self.file = bytearray(bytes([length >> 8, length & 0xFF]) + message)
        self.file += bytes(max(0, self.file_size - len(self.file)))
        self.mle = spec.get("mle", 0xFF)
        self.mlc = spec.get("mlc", 0xFF)
        self.write_access = 0xFF if spec.get("readOnly") else 0x00
        self.lockable = spec.get("lockable", True)
        self.v1 = spec.get("v1", False)
        self.container_override = bytes.fromhex(spec["container"]) if "container" in spec else None
        self.application = False
        self.selected = None

    def container(self):
        if self.container_override is not None:
            return self.container_override
        return (bytes([0x00, 0x0F, 0x10 if self.v1 else 0x20]) + struct.pack(">HH", self.mle, self.mlc)
                + bytes([0x04, 0x06, 0xE1, 0x04]) + struct.pack(">H", self.file_size)
                + bytes([0x00, self.write_access]))

    def message(self):
        length = self.file[0] << 8 | self.file[1]
        return bytes(self.file[2:2 + length])

    def respond(self, apdu):
        if len(apdu) < 4:
            return sw(0x6700)
        ins, p1, p2 = apdu[1], apdu[2], apdu[3]
        data = apdu[5:5 + apdu[4]] if len(apdu) > 5 else b""
        if ins == 0xA4 and p1 == 0x04:
            aid = bytes.fromhex("D2760000850100" if self.v1 else "D2760000850101")
            self.application = self.formatted and data == aid
            self.selected = None
            return sw(0x9000 if self.application else 0x6A82)
        if ins == 0xA4 and p1 == 0x00:
            if not self.application or data not in (b"\xE1\x03", b"\xE1\x04"):
                return sw(0x6A82)
            self.selected = data
            return sw(0x9000)
        offset = (p1 & 0x7F) << 8 | p2
        if ins == 0xB0:
            if self.selected is None:
                return sw(0x6986)
            contents = self.container() if self.selected == b"\xE1\x03" else self.file
            wanted = apdu[4] or 256 if len(apdu) == 5 else 256
            if offset > len(contents):
                return sw(0x6B00)
            chunk = bytes(contents[offset:offset + wanted])
            return chunk + sw(0x9000 if len(chunk) == wanted else 0x6282)
        if ins == 0xD6:
            if self.selected is None:
                return sw(0x6986)
            if self.selected == b"\xE1\x03":
                if not self.lockable or offset != 14 or data != b"\xFF":
                    return sw(0x6982)
                self.write_access = 0xFF
                return sw(0x9000)
            if self.write_access != 0x00:
                return sw(0x6982)
            if offset + len(data) > len(self.file):
                return sw(0x6A84)
            self.file[offset:offset + len(data)] = data
            return sw(0x9000)
        return sw(0x6D00)

    def state(self):
        return {"message": self.message().hex() if self.formatted else None,
                "writeAccess": self.write_access}


class Type2Tag:
    """An NTAG21x-like Type 2 tag behind the storage card pseudo-APDUs FF B0 (read 16 bytes) and
    FF D6 (write one page)."""

    atr = ULTRALIGHT_ATR

    def __init__(self, spec):
        message = spec.get("message")
        self.data_size = spec.get("dataSize", 144)
        pages = 4 + self.data_size // 4 + 5
        self.memory = bytearray(pages * 4)
        self.memory[0:9] = bytes.fromhex("04517CA12234567890")
        if message is not None:
            message = bytes.fromhex(message)
            self.memory[12:16] = bytes([0xE1, 0x10, self.data_size // 8, 0x0F if spec.get("readOnly") else 0x00])
            if len(message) > 254:
                tlv = bytes([0x03, 0xFF, len(message) >> 8, len(message) & 0xFF]) + message + b"\xFE"
            else:
                tlv = bytes([0x03, len(message)]) + message + b"\xFE"
            self.memory[16:16 + len(tlv)] = tlv[:self.data_size]

    def locked(self, page):
        if page < 2:
            return True
        if 3 <= page <= 7:
            return bool(self.memory[10] & (1 << page))
        if 8 <= page <= 15:
            return bool(self.memory[11] & (1 << (page - 8)))
        lock = 16 + self.data_size
        if page * 4 >= lock:
            return False
        bit = (page * 4 - 64) // 8
        return bool(self.memory[lock + bit // 8] & (1 << (bit % 8)))

    def respond(self, apdu):
        if len(apdu) < 5 or apdu[0] != 0xFF:
            return sw(0x6A81)
        page = apdu[2] << 8 | apdu[3]
        pages = len(self.memory) // 4
        if apdu[1] == 0xB0:
            if page >= pages:
                return sw(0x6300)
            wanted = min(apdu[4] or 16, 16)
            return bytes(self.memory[(page * 4 + i) % len(self.memory)] for i in range(wanted)) + sw(0x9000)
        if apdu[1] == 0xD6:
            data = apdu[5:9]
            if page >= pages or len(data) != 4 or self.locked(page):
                return sw(0x6300)
            for i, byte in enumerate(data):
                if page == 2:
                    if i >= 2:
                        self.memory[8 + i] |= byte
                elif page == 3:
                    self.memory[12 + i] |= byte
                else:
                    self.memory[page * 4 + i] = byte
            return sw(0x9000)
        return sw(0x6A81)

    def state(self):
        area = self.memory[16:16 + self.data_size]
        message = None
        if self.memory[12] == 0xE1 and area[:1] == b"\x03":
            if area[1] == 0xFF:
                message = bytes(area[4:4 + (area[2] << 8 | area[3])]).hex()
            else:
                message = bytes(area[2:2 + area[1]]).hex()
        return {"message": message, "access": self.memory[15]}


class Presentation:
    """One card connected to one vpcd port, served by a thread of its own."""

    def __init__(self, port, spec):
        self.card = Type4Tag(spec) if spec.get("type", "t4") == "t4" else Type2Tag(spec)
        self.leave_after = spec.get("leaveAfter")
        self.stall_after = spec.get("stallAfter")
        self.refuse = {int(k, 16): int(v, 16) for k, v in spec.get("refuse", {}).items()}
        self.apdus = 0
        self.lock = threading.Lock()
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.sock.settimeout(None)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.closed = threading.Event()
        threading.Thread(target=self.serve, daemon=True).start()

    def receive(self, count):
        data = b""
        while len(data) < count:
            self.sock.setsockopt(socket.IPPROTO_TCP, TCP_QUICKACK, 1)
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                raise ConnectionError("closed")
            data += chunk
        return data

    def serve(self):
        try:
            while not self.closed.is_set():
                (length,) = struct.unpack(">H", self.receive(2))
                message = self.receive(length)
                if length == 1:
                    if message[0] == 4:
                        self.send(self.card.atr)
                    continue
                with self.lock:
                    self.apdus += 1
                    number = self.apdus
                    if self.leave_after is not None and number >= self.leave_after:
                        self.close()
                        return
                    if self.stall_after is not None and number >= self.stall_after:
                        continue
                    if len(message) > 1 and message[1] in self.refuse:
                        response = sw(self.refuse[message[1]])
                    else:
                        response = self.card.respond(message)
                self.send(response)
        except (OSError, ConnectionError, struct.error):
            pass
        finally:
            self.close()

    def send(self, data):
        self.sock.sendall(struct.pack(">H", len(data)) + data)

    def close(self):
        if not self.closed.is_set():
            self.closed.set()
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.sock.close()


def main():
    presentations = {}
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            request = json.loads(line)
            command = request["cmd"]
            port = request.get("port", 35963)
            if command == "present":
                old = presentations.pop(port, None)
                if old:
                    old.close()
                presentations[port] = Presentation(port, request["card"])
                reply = {"ok": True}
            elif command == "remove":
                old = presentations.pop(port, None)
                if old:
                    old.close()
                reply = {"ok": True}
            elif command == "state":
                presentation = presentations.get(port)
                if presentation is None:
                    reply = {"ok": False, "error": "no card"}
                else:
                    with presentation.lock:
                        reply = dict(presentation.card.state(), ok=True, apdus=presentation.apdus,
                                     connected=not presentation.closed.is_set())
            elif command == "quit":
                print(json.dumps({"ok": True}), flush=True)
                break
            else:
                reply = {"ok": False, "error": "unknown command " + command}
        except Exception as error:  # a bad request is answered, never fatal
            reply = {"ok": False, "error": repr(error)}
        print(json.dumps(reply), flush=True)
    for presentation in presentations.values():
        presentation.close()


if __name__ == "__main__":
    main()
