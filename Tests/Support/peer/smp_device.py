#!/usr/bin/env python3
"""An MCUmgr SMP device for ReaderKit's test peers, in the Python 3 standard library only.

It answers SMP requests as a Zephyr application with MCUmgr and MCUboot does (Zephyr's "SMP Protocol
Specification", OS management group 0 and image management group 1): echo, reset, MCUmgr parameters,
image state read and write (test and confirm by the MCUboot SHA-256 TLV hash), image upload with the
resume rules of Zephyr's img_mgmt (a first chunk with the same "sha" answers the offset reached; a chunk
at another offset answers the expected one), and MCUboot's swap, revert and confirm rules at boot. It
keeps everything in memory and does no I/O: a peer (the D-Bus GATT server of the tests) calls

    notifications = device.handle(packet)     # from the SMP characteristic's WriteValue
    # emit each of notifications as a notification of the characteristic (after device.answer_delay s)
    action = device.take_link_action()        # None, "reset" (disconnect: Reason.Remote, then after
                                              # device.boot_time s call device.boot() and let the
                                              # device connect again) or "drop" (disconnect now:
                                              # Reason.Timeout, out of range; connectable again at once)
    device.link_closed()                      # when the link goes down for any reason

Faults (attributes, set by the peer): drop_at_fraction, refusals {(group, command): rc},
answer_delay (seconds, the peer waits that long before emitting), slow_after_fraction (once the
upload has reached it, each answer waits a second), wrong_sequence_count,
malformed_answer (group, command), fail_confirm, boots_old_image.

Its CBOR is smp_cbor.py, beside it. `python3 smp_device.py --self-test` checks both; `python3 smp_device.py --stdio` serves it over
stdin/stdout for ReaderKit's Swift tests (one hex write per input line; see serve_stdio).
"""

import hashlib
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from smp_cbor import CBORError, cbor_decode, cbor_encode  # noqa: E402  (its own small CBOR, beside it)

# --- SMP frames -------------------------------------------------------------------------------------

HEADER = struct.Struct(">BBHHBB")  # Res|Ver|OP, Flags, Data Length, Group ID, Sequence Num, Command ID
OP_READ, OP_READ_RSP, OP_WRITE, OP_WRITE_RSP = 0, 1, 2, 3


def frame(op, group, sequence, command, body, version=1):
    """One SMP frame: the 8-byte big-endian header, then `body` (bytes)."""
    return HEADER.pack((version & 3) << 3 | op, 0, len(body), group, sequence, command) + body


def parse_header(data):
    first, flags, length, group, sequence, command = HEADER.unpack(data[:8])
    return {"op": first & 7, "version": first >> 3 & 3, "reserved": first >> 5, "flags": flags,
            "length": length, "group": group, "sequence": sequence, "command": command}


# --- MCUboot ----------------------------------------------------------------------------------------

IMAGE_MAGIC = 0x96F3B83D


def mcuboot_info(image):
    """(SHA-256 TLV, version text) of an MCUboot image, or None when it is not one."""
    if len(image) < 32 or struct.unpack_from("<I", image, 0)[0] != IMAGE_MAGIC:
        return None
    hdr_size, protected, img_size = struct.unpack_from("<HHI", image, 8)
    major, minor, revision, build = struct.unpack_from("<BBHI", image, 20)
    offset = hdr_size + img_size + protected
    if offset + 4 > len(image) or struct.unpack_from("<H", image, offset)[0] != 0x6907:
        return None
    end = offset + struct.unpack_from("<H", image, offset + 2)[0]
    cursor = offset + 4
    while cursor + 4 <= min(end, len(image)):
        kind, length = struct.unpack_from("<HH", image, cursor)
        if kind == 0x10 and length == 32:
            version = f"{major}.{minor}.{revision}" + (f".{build}" if build else "")
            return bytes(image[cursor + 4:cursor + 36]), version
        cursor += 4 + length
    return None


def build_image(version=(1, 1, 0, 0), body_size=1000, seed=1):
    """An MCUboot image laid out as imgtool does (32-byte header, SHA-256 TLV), for tests."""
    major, minor, revision, build = version
    header = struct.pack("<IIHHIIBBHII", IMAGE_MAGIC, 0, 32, 0, body_size, 0, major, minor, revision, build, 0)
    body = bytearray()
    value = seed
    for _ in range(body_size):
        value = (value * 31 + 7) & 0xFF
        body.append(value)
    signed = header + bytes(body)
    tlv = struct.pack("<HH", 0x10, 32) + hashlib.sha256(signed).digest()
    return signed + struct.pack("<HH", 0x6907, 4 + len(tlv)) + tlv


# --- The device -------------------------------------------------------------------------------------

OLD_HASH = bytes([0xAB]) * 32


class SMPDevice:
    """A Zephyr-like SMP server with MCUboot slots; see the module's documentation."""

    def __init__(self, notification_length=244, buffer_size=1024):
        self.notification_length = notification_length
        self.buffer_size = buffer_size
        self.primary = {"hash": OLD_HASH, "version": "1.0.0", "confirmed": True}
        self.secondary = None  # {"hash", "version", "pending", "confirmed"}
        self.running_test = False
        self.resets = 0
        self.requests = []  # (group, command, upload offset or None)
        self._upload = None  # {"sha", "length", "data"}
        self._buffer = bytearray()
        self._link_action = None
        # Faults.
        self.drop_at_fraction = None
        self.refusals = {}
        self.answer_delay = 0.0
        self.slow_after_fraction = None
        self.wrong_sequence_count = 0
        self.malformed_answer = None
        self.fail_confirm = False
        self.boots_old_image = False

    # The peer's side.

    def take_link_action(self):
        """None, "reset" or "drop": what the peer must do with the link after emitting the answers."""
        action, self._link_action = self._link_action, None
        return action

    def link_closed(self):
        """The link went down: a partial request is lost (an upload in progress is kept, as in RAM)."""
        self._buffer.clear()

    def handle(self, packet):
        """One write to the SMP characteristic; returns the notifications to emit, in order."""
        self._buffer.extend(packet)
        notifications = []
        while len(self._buffer) >= 8:
            header = parse_header(self._buffer)
            if header["reserved"] or header["op"] > 3 or header["version"] > 1:
                self._buffer.clear()  # Nothing marks where the next frame starts.
                break
            end = 8 + header["length"]
            if len(self._buffer) < end:
                break
            body = bytes(self._buffer[8:end])
            del self._buffer[:end]
            answer = self._request(header, body)
            if answer is not None:
                notifications.extend(
                    answer[i:i + self.notification_length] for i in range(0, len(answer), self.notification_length))
        return notifications

    def boot(self):
        """The reset is over: MCUboot swaps a pending image in, or reverts an unconfirmed test."""
        if self.secondary and self.secondary["pending"]:
            if self.boots_old_image:
                self.secondary["pending"] = False
            else:
                old = self.primary
                self.primary = {"hash": self.secondary["hash"], "version": self.secondary["version"],
                                "confirmed": False}
                self.secondary = {"hash": old["hash"], "version": old["version"], "pending": False,
                                  "confirmed": old["confirmed"]}
                self.running_test = True
        elif self.running_test and not self.primary["confirmed"] and self.secondary:
            old = self.secondary
            self.secondary = {"hash": self.primary["hash"], "version": self.primary["version"], "pending": False,
                              "confirmed": False}
            self.primary = {"hash": old["hash"], "version": old["version"], "confirmed": True}
            self.running_test = False

    # Requests.

    def _request(self, header, body):
        group, command, op = header["group"], header["command"], header["op"]
        try:
            request = cbor_decode(body) if body else {}
        except CBORError:
            request = {}
        if not isinstance(request, dict):
            request = {}
        self.requests.append((group, command, request.get("off") if (group, command) == (1, 1) else None))
        if op not in (OP_READ, OP_WRITE):
            return None
        version = header["version"]
        if self.malformed_answer == (group, command):
            self.malformed_answer = None
            payload = bytes([0xA1, 0x61, 0x61])
        elif (group, command) in self.refusals:
            payload = cbor_encode(self._error(self.refusals[(group, command)], group, version))
        else:
            answer = self._respond(group, command, op, request, version)
            if answer is None:
                return None
            payload = cbor_encode(answer)
        sequence = header["sequence"]
        if self.wrong_sequence_count > 0:
            self.wrong_sequence_count -= 1
            sequence = (sequence + 1) & 0xFF
        return frame(op + 1, group, sequence, command, payload, version)

    @staticmethod
    def _error(rc, group, version):
        return {"err": {"group": group, "rc": rc}} if version == 1 else {"rc": rc}

    def _respond(self, group, command, op, request, version):
        if (group, command) == (0, 0):
            return {"r": request.get("d", "")}
        if (group, command, op) == (0, 5, OP_WRITE):
            self.resets += 1
            self._upload = None  # Lost with RAM.
            self._link_action = "reset"
            return {}
        if (group, command, op) == (0, 6, OP_READ):
            return {"buf_size": self.buffer_size, "buf_count": 4}
        if (group, command, op) == (1, 0, OP_READ):
            return self._state()
        if (group, command, op) == (1, 0, OP_WRITE):
            return self._set_state(request, version)
        if (group, command, op) == (1, 1, OP_WRITE):
            return self._upload_chunk(request, version)
        return {"rc": 8}  # MGMT_ERR_ENOTSUP

    def _state(self):
        images = [{"image": 0, "slot": 0, "version": self.primary["version"], "hash": self.primary["hash"],
                   "active": True}]
        if self.primary["confirmed"]:
            images[0]["confirmed"] = True
        if self.secondary:
            entry = {"image": 0, "slot": 1, "version": self.secondary["version"], "hash": self.secondary["hash"]}
            if self.secondary["pending"]:
                entry["pending"] = True
            if self.secondary.get("confirmed"):
                entry["confirmed"] = True
            images.append(entry)
        return {"images": images}

    def _set_state(self, request, version):
        digest = request.get("hash")
        if request.get("confirm") is True:
            if digest is not None and digest != self.primary["hash"]:
                return self._error(8, 1, version)  # IMG_MGMT_ERR_HASH_NOT_FOUND
            if self.fail_confirm:
                return self._error(32, 1, version)  # IMG_MGMT_ERR_IMAGE_CONFIRMATION_DENIED
            self.primary["confirmed"] = True
            self.running_test = False
            return self._state()
        if not isinstance(digest, bytes) or len(digest) != 32:
            return self._error(24, 1, version)  # IMG_MGMT_ERR_INVALID_HASH
        if not self.secondary or self.secondary["hash"] != digest:
            return self._error(8, 1, version)
        self.secondary["pending"] = True
        return self._state()

    def _upload_chunk(self, request, version):
        offset, data = request.get("off"), request.get("data")
        if not isinstance(offset, int) or not isinstance(data, bytes):
            return self._error(20, 1, version)  # IMG_MGMT_ERR_INVALID_OFFSET
        if offset == 0:
            sha = request.get("sha")
            if sha is not None and self._upload and self._upload["sha"] == sha:
                return {"off": len(self._upload["data"])}  # Resume from the offset reached.
            length = request.get("len")
            if not isinstance(length, int):
                return self._error(21, 1, version)  # IMG_MGMT_ERR_INVALID_LENGTH
            if data[:4] != struct.pack("<I", IMAGE_MAGIC):
                return self._error(23, 1, version)  # IMG_MGMT_ERR_INVALID_IMAGE_HEADER_MAGIC
            self._upload = {"sha": sha, "length": length, "data": bytearray()}
            self.secondary = None  # The slot is erased.
        upload = self._upload
        if upload is None:
            return self._error(17, 1, version)  # IMG_MGMT_ERR_FLASH_CONTEXT_NOT_SET
        if offset != len(upload["data"]):
            return {"off": len(upload["data"])}
        if offset + len(data) > upload["length"]:
            return self._error(31, 1, version)  # IMG_MGMT_ERR_INVALID_IMAGE_DATA_OVERRUN
        upload["data"].extend(data)
        reached = len(upload["data"])
        if self.drop_at_fraction is not None and reached >= self.drop_at_fraction * upload["length"]:
            self.drop_at_fraction = None
            self._link_action = "drop"
            return None
        if reached < upload["length"]:
            return {"off": reached}
        self._upload = None
        info = mcuboot_info(upload["data"])
        if info is None:
            return self._error(22, 1, version)  # IMG_MGMT_ERR_INVALID_IMAGE_HEADER
        self.secondary = {"hash": info[0], "version": info[1], "pending": False}
        match = upload["sha"] is None or hashlib.sha256(upload["data"]).digest() == upload["sha"]
        return {"off": reached, "match": match}


def _upload_fraction(device):
    """How far the upload in progress has come (0 to 1), or None without one."""
    upload = device._upload
    if upload is None or not upload["length"]:
        return None
    return len(upload["data"]) / upload["length"]


SMPDevice.upload_fraction = _upload_fraction


# --- A default device, as the task's peer interface -------------------------------------------------

default_device = SMPDevice()


def handle(packet: bytes) -> list:
    """One write to the SMP characteristic of the default device; the notifications to emit."""
    return default_device.handle(packet)


# --- Serving over stdin/stdout ----------------------------------------------------------------------

def serve_stdio(device, source=sys.stdin, sink=sys.stdout):
    """Line protocol for the Swift tests. In: `W <hex>` one write; `C` link closed; `B` boot; `F <name>
    <value>` set a fault (drop_at_fraction, wrong_sequence_count, fail_confirm, boots_old_image);
    `Q` query. Out, for each input line: `N <hex>` per notification, `A <action>` for a link action,
    `S <primary hash hex> <version> <confirmed 0/1> <resets>` for a query, then `.`."""
    for line in source:
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "W":
            for notification in device.handle(bytes.fromhex(parts[1] if len(parts) > 1 else "")):
                sink.write(f"N {notification.hex()}\n")
            action = device.take_link_action()
            if action:
                sink.write(f"A {action}\n")
        elif parts[0] == "C":
            device.link_closed()
        elif parts[0] == "B":
            device.boot()
        elif parts[0] == "F":
            name, value = parts[1], parts[2]
            setattr(device, name, float(value) if name == "drop_at_fraction" else int(value)
                    if name == "wrong_sequence_count" else value == "1")
        elif parts[0] == "Q":
            primary = device.primary
            sink.write(f"S {primary['hash'].hex()} {primary['version']} {int(primary['confirmed'])} {device.resets}\n")
        sink.write(".\n")
        sink.flush()


# --- Self-test --------------------------------------------------------------------------------------

class _Client:
    """A minimal SMP client over a device, for the self-test."""

    def __init__(self, device):
        self.device = device
        self.sequence = 0

    def call(self, op, group, command, body, version=1):
        self.sequence = (self.sequence + 1) & 0xFF
        request = frame(op, group, self.sequence, command, cbor_encode(body), version)
        notifications = []
        for i in range(0, len(request), 20):  # Writes of a small MTU: the device reassembles.
            notifications.extend(self.device.handle(request[i:i + 20]))
        data = b"".join(notifications)
        if not data:
            return None, None
        header = parse_header(data)
        assert header["op"] == op + 1 and header["group"] == group and header["command"] == command
        return header, cbor_decode(data[8:8 + header["length"]])

    def upload(self, image, chunk=100, start=0):
        sha = hashlib.sha256(image).digest()
        offset = start
        while offset < len(image):
            body = {"off": offset, "data": image[offset:offset + chunk]}
            if offset == 0:
                body = {"image": 0, "len": len(image), "sha": sha, "off": 0, "data": image[:chunk]}
            header, answer = self.call(OP_WRITE, 1, 1, body)
            if answer is None:
                return offset
            offset = answer["off"]
        return offset


def self_test():
    # CBOR: RFC 8949 examples and hostile input.
    for value, encoded in [(0, "00"), (24, "1818"), (1000, "1903e8"), (-1, "20"), (-1000, "3903e7"),
                           (b"\x01\x02\x03\x04", "4401020304"), ("IETF", "6449455446"), ([1, [2, 3], [4, 5]],
                           "8301820203820405"), ({"a": 1, "b": [2, 3]}, "a26161016162820203"), (True, "f5"),
                           (None, "f6"), (2 ** 64 - 1, "1bffffffffffffffff")]:
        assert cbor_encode(value).hex() == encoded, (value, cbor_encode(value).hex())
        assert cbor_decode(bytes.fromhex(encoded)) == value
    assert cbor_decode(bytes.fromhex("5f42010243030405ff")) == b"\x01\x02\x03\x04\x05"
    assert cbor_decode(bytes.fromhex("bf6346756ef563416d7421ff")) == {"Fun": True, "Amt": -2}
    for bad in ["", "18", "5a7fffffff00", "9bffffffffffffffff", "a2616101616102", "ff", "1c", "62c328", "8201",
                "c11a514b67b0", "f93c00", "9f" * 40]:
        try:
            cbor_decode(bytes.fromhex(bad))
        except CBORError:
            continue
        raise AssertionError(f"accepted {bad}")

    image = build_image(body_size=3000)
    new_hash, new_version = mcuboot_info(image)
    assert new_version == "1.1.0"

    # A full update: upload (split writes), test, reset, boot, confirm.
    device = SMPDevice(notification_length=20)
    client = _Client(device)
    _, params = client.call(OP_READ, 0, 6, {})
    assert params["buf_size"] == 1024
    assert client.upload(image) == len(image)
    _, state = client.call(OP_WRITE, 1, 0, {"hash": new_hash, "confirm": False})
    assert state["images"][1]["pending"] is True
    assert client.call(OP_WRITE, 0, 5, {})[1] == {} and device.take_link_action() == "reset"
    device.link_closed()
    device.boot()
    _, state = client.call(OP_READ, 1, 0, {})
    assert state["images"][0]["hash"] == new_hash and "confirmed" not in state["images"][0]
    _, state = client.call(OP_WRITE, 1, 0, {"hash": new_hash, "confirm": True})
    assert state["images"][0]["confirmed"] is True
    device.boot()
    assert device.primary["hash"] == new_hash and device.primary["version"] == "1.1.0"

    # A drop at 40 % and the resume from the device's offset.
    device = SMPDevice()
    device.drop_at_fraction = 0.4
    client = _Client(device)
    stopped = client.upload(image)
    assert device.take_link_action() == "drop" and stopped < len(image)
    device.link_closed()
    header, answer = client.call(OP_WRITE, 1, 1, {"image": 0, "len": len(image), "sha": hashlib.sha256(image).digest(),
                                                  "off": 0, "data": image[:100]})
    assert answer["off"] >= 0.4 * len(image), answer
    assert client.upload(image, start=answer["off"]) == len(image)

    # A failed confirm: the next reset reverts to the old image.
    device = SMPDevice()
    device.fail_confirm = True
    client = _Client(device)
    client.upload(image)
    client.call(OP_WRITE, 1, 0, {"hash": new_hash, "confirm": False})
    client.call(OP_WRITE, 0, 5, {})
    device.boot()
    _, refused = client.call(OP_WRITE, 1, 0, {"hash": new_hash, "confirm": True})
    assert refused == {"err": {"group": 1, "rc": 32}}
    _, legacy = client.call(OP_WRITE, 1, 0, {"confirm": True}, version=0)
    assert legacy == {"rc": 32}
    device.boot()
    assert device.primary["hash"] == OLD_HASH and device.primary["confirmed"]

    # MCUboot refuses the new image: the old one keeps running.
    device = SMPDevice()
    device.boots_old_image = True
    client = _Client(device)
    client.upload(image)
    client.call(OP_WRITE, 1, 0, {"hash": new_hash, "confirm": False})
    device.boot()
    assert device.primary["hash"] == OLD_HASH

    # Refusals, wrong sequence numbers, malformed answers.
    device = SMPDevice()
    device.refusals = {(0, 5): 10}
    assert _Client(device).call(OP_WRITE, 0, 5, {})[1] == {"err": {"group": 0, "rc": 10}}
    device = SMPDevice()
    device.wrong_sequence_count = 1
    answer = device.handle(frame(OP_READ, 1, 7, 0, cbor_encode({})))
    assert parse_header(answer[0])["sequence"] == 8
    device.malformed_answer = (1, 0)
    answer = b"".join(device.handle(frame(OP_READ, 1, 9, 0, cbor_encode({}))))
    try:
        cbor_decode(answer[8:])
    except CBORError:
        pass
    else:
        raise AssertionError("the malformed answer decodes")

    # A malformed header drops the buffer; the next frame is answered.
    device = SMPDevice()
    assert device.handle(b"\xe0" + b"\x00" * 7) == []
    assert len(device.handle(frame(OP_WRITE, 0, 1, 0, cbor_encode({"d": "hi"})))) == 1

    # The module-level entry point.
    assert parse_header(handle(frame(OP_READ, 0, 3, 6, cbor_encode({})))[0])["sequence"] == 3
    print("smp_device: self-test passed")


if __name__ == "__main__":
    if "--self-test" in sys.argv:
        self_test()
    elif "--stdio" in sys.argv:
        serve_stdio(SMPDevice())
    else:
        print(__doc__)
