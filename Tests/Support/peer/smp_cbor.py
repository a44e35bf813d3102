"""The CBOR (RFC 8949) subset MCUmgr's SMP uses, in the Python 3 standard library: integers, byte and
text strings, arrays, maps, booleans and null, definite and indefinite lengths. Decoding is bounded
(nesting depth, every length checked against the input before anything is taken) and fails with a
CBORError carrying the byte offset. Used by smp_device.py."""

import struct


class CBORError(ValueError):
    """Malformed or unsupported CBOR, with the byte offset at fault."""

    def __init__(self, message, offset):
        super().__init__(f"{message} at byte {offset}")
        self.offset = offset


def cbor_encode(value):
    """Encodes ints, bytes, str, list, dict (in order), bool and None, in the shortest forms."""
    out = bytearray()

    def head(major, argument):
        if argument < 24:
            out.append(major << 5 | argument)
        elif argument <= 0xFF:
            out.extend([major << 5 | 24, argument])
        elif argument <= 0xFFFF:
            out.append(major << 5 | 25)
            out.extend(struct.pack(">H", argument))
        elif argument <= 0xFFFFFFFF:
            out.append(major << 5 | 26)
            out.extend(struct.pack(">I", argument))
        else:
            out.append(major << 5 | 27)
            out.extend(struct.pack(">Q", argument))

    def item(v):
        if v is True or v is False:
            out.append(0xF5 if v else 0xF4)
        elif v is None:
            out.append(0xF6)
        elif isinstance(v, int):
            head(0, v) if v >= 0 else head(1, -1 - v)
        elif isinstance(v, (bytes, bytearray)):
            head(2, len(v))
            out.extend(v)
        elif isinstance(v, str):
            data = v.encode("utf-8")
            head(3, len(data))
            out.extend(data)
        elif isinstance(v, (list, tuple)):
            head(4, len(v))
            for x in v:
                item(x)
        elif isinstance(v, dict):
            head(5, len(v))
            for k, x in v.items():
                item(k)
                item(x)
        else:
            raise TypeError(f"cannot encode {type(v).__name__}")

    item(value)
    return bytes(out)


def cbor_decode(data, max_depth=16):
    """Decodes exactly one item; bounded (depth, lengths checked against the input)."""
    data = bytes(data)
    pos = 0

    def head():
        nonlocal pos
        start = pos
        if pos >= len(data):
            raise CBORError("truncated", start)
        initial = data[pos]
        pos += 1
        major, info = initial >> 5, initial & 0x1F
        if info < 24:
            return start, major, info, info
        if info <= 27:
            width = 1 << (info - 24)
            if pos + width > len(data):
                raise CBORError("truncated", start)
            argument = int.from_bytes(data[pos:pos + width], "big")
            pos += width
            return start, major, info, argument
        if info == 31:
            return start, major, info, None
        raise CBORError(f"reserved additional information {info}", start)

    def take(length, start):
        nonlocal pos
        if length > len(data) - pos:
            raise CBORError(f"length {length} exceeds the input", start)
        chunk = data[pos:pos + length]
        pos += length
        return chunk

    def at_break():
        return pos < len(data) and data[pos] == 0xFF

    def string(start, major, argument):
        nonlocal pos
        if argument is not None:
            return take(argument, start)
        out = bytearray()
        while True:
            if pos >= len(data):
                raise CBORError("truncated", pos)
            if at_break():
                pos += 1
                return bytes(out)
            s, m, _, a = head()
            if m != major or a is None:
                raise CBORError("invalid chunk", s)
            piece = take(a, s)
            if major == 3:
                try:
                    piece.decode("utf-8")
                except UnicodeDecodeError:
                    raise CBORError("invalid UTF-8", s) from None
            out.extend(piece)

    def item(depth):
        nonlocal pos
        start, major, info, argument = head()
        if major == 0 or major == 1:
            if argument is None:
                raise CBORError("indefinite integer", start)
            return argument if major == 0 else -1 - argument
        if major == 2:
            return string(start, 2, argument)
        if major == 3:
            try:
                return string(start, 3, argument).decode("utf-8")
            except UnicodeDecodeError:
                raise CBORError("invalid UTF-8", start) from None
        if major in (4, 5):
            if depth + 1 > max_depth:
                raise CBORError("nesting too deep", start)
            if major == 4:
                if argument is not None:
                    if argument > len(data) - pos:
                        raise CBORError(f"length {argument} exceeds the input", start)
                    return [item(depth + 1) for _ in range(argument)]
                items = []
                while True:
                    if pos >= len(data):
                        raise CBORError("truncated", pos)
                    if at_break():
                        pos += 1
                        return items
                    items.append(item(depth + 1))
            result = {}
            count = argument
            if count is not None and count > (len(data) - pos) // 2:
                raise CBORError(f"length {count} exceeds the input", start)
            while count is None or len(result) < count:
                if count is None:
                    if pos >= len(data):
                        raise CBORError("truncated", pos)
                    if at_break():
                        pos += 1
                        break
                key_at = pos
                key = item(depth + 1)
                if isinstance(key, (list, dict)):
                    raise CBORError("unsupported key", key_at)
                if count is None and at_break():
                    raise CBORError("a key without a value", pos)
                value = item(depth + 1)
                if key in result:
                    raise CBORError("duplicate key", key_at)
                result[key] = value
            return result
        if major == 6:
            raise CBORError("tag", start)
        if info == 20:
            return False
        if info == 21:
            return True
        if info == 22 or info == 23:
            return None
        if info == 31:
            raise CBORError("unexpected break", start)
        raise CBORError("unsupported simple value or float", start)

    value = item(0)
    if pos != len(data):
        raise CBORError(f"{len(data) - pos} trailing byte(s)", pos)
    return value
