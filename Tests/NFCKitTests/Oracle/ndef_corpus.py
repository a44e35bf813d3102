"""Generates the NDEF oracle corpus with ndeflib: messages of every record kind, encoded by ndeflib.

Prints one JSON line per message: {"name": str, "hex": the message bytes, "chunked": bool,
"records": ndef_view.full_view(bytes)} where the view is ndeflib's own decoding of the bytes.
Deterministic for a given seed:  python ndef_corpus.py [--seed N] [--count N]
"""
import argparse
import json
import os
import random
import sys

sys.dont_write_bytecode = True  # keep __pycache__ out of the Swift test target's folder
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ndef  # noqa: E402
from ndef.record import Record  # noqa: E402
import ndef_view  # noqa: E402

LANGUAGES = ["en", "de", "fr", "ja", "en-US", "zh-Hant-TW", "pt-BR", "x-klingon"]
TEXT_POOL = [
    "hello", "Hello, world!", "Grüße aus Zürich", "日本語のテキスト", "emoji 🎉🚀 and ZWJ 👩‍💻",
    "tab\tand newline\n", "", "a" * 300, "Ελληνικά", "עברית", "\u0301combining first", "quote \" backslash \\",
]
URI_PREFIXES = [
    "", "http://www.", "https://www.", "http://", "https://", "tel:", "mailto:", "ftp://anonymous:anonymous@",
    "ftp://ftp.", "ftps://", "sftp://", "smb://", "nfs://", "ftp://", "dav://", "news:", "telnet://", "imap:",
    "rtsp://", "urn:", "pop:", "sip:", "sips:", "tftp:", "btspp://", "btl2cap://", "btgoep://", "tcpobex://",
    "irdaobex://", "file://", "urn:epc:id:", "urn:epc:tag:", "urn:epc:pat:", "urn:epc:raw:", "urn:epc:", "urn:nfc:",
]
OTHER_SCHEMES = ["geo:47.37,8.54", "sms:+41790000000", "spotify:track:1", "market://details?id=x", "ndef:"]
MEDIA_TYPES = ["text/plain", "application/json", "text/vcard", "image/png", "application/octet-stream"]


def random_word(rng, length):
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-._~/?=&"
    return "".join(rng.choice(alphabet) for _ in range(length))


def random_text(rng):
    if rng.random() < 0.5:
        return rng.choice(TEXT_POOL)
    return "".join(rng.choice("abc xyzäöü€漢字🙂") for _ in range(rng.randint(0, 40)))


def random_bytes(rng, length):
    return bytes(rng.getrandbits(8) for _ in range(length))


def random_payload_length(rng):
    # Mostly short records, a good share of long ones (payload >= 256 needs a 4-byte length).
    return rng.choice([0, 1, 2, 10, 100, 255, 256, 257, rng.randint(0, 600), rng.randint(256, 2000)])


def maybe_name(rng, record):
    if rng.random() < 0.25:
        record.name = random_word(rng, rng.randint(1, 12))
    return record


def text_record(rng):
    return ndef.TextRecord(random_text(rng), rng.choice(LANGUAGES), rng.choice(["UTF-8", "UTF-16"]))


def uri_record(rng, prefix=None):
    if prefix is None:
        prefix = rng.choice(URI_PREFIXES + [""] * 3)
    if prefix == "" and rng.random() < 0.6:
        return ndef.UriRecord(rng.choice(OTHER_SCHEMES))
    suffix = random_word(rng, rng.randint(0, 30))
    if rng.random() < 0.15:
        suffix += "/päth/日本"
    return ndef.UriRecord(prefix + suffix)


def smart_poster(rng):
    titles = {}
    for language in rng.sample(LANGUAGES, rng.randint(0, 3)):
        titles[language] = random_text(rng)
    record = ndef.SmartposterRecord(uri_record(rng).iri)
    for language, text in titles.items():
        record.set_title(text, language, rng.choice(["UTF-8", "UTF-16"]))
    if rng.random() < 0.5:
        record.action = rng.choice(["exec", "save", "edit"])
    if rng.random() < 0.4:
        record.resource_size = rng.randint(0, 0xFFFFFFFF)
    if rng.random() < 0.4:
        record.resource_type = rng.choice(["text/html", "image/jpeg", "application/pdf"])
    if rng.random() < 0.2:
        record.add_icon("image/png", b"\x89PNG\r\n\x1a\n" + random_bytes(rng, rng.randint(0, 40)))
    return record


def media_record(rng):
    media_type = rng.choice(MEDIA_TYPES)
    if media_type == "text/plain":
        data = random_text(rng).encode("utf-8")
    elif media_type == "application/json":
        data = json.dumps({"id": rng.randint(0, 10**6), "name": random_text(rng)}).encode("utf-8")
    elif media_type == "text/vcard":
        data = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:{}\r\nTEL:+41{}\r\nEND:VCARD\r\n".format(
            random_text(rng), rng.randint(10**8, 10**9)).encode("utf-8")
    else:
        data = random_bytes(rng, random_payload_length(rng))
    return Record(media_type, None, data)


def absolute_uri_record(rng):
    return Record("https://example.com/schema/" + random_word(rng, rng.randint(1, 10)), None,
                  random_bytes(rng, random_payload_length(rng)))


def external_record(rng):
    if rng.random() < 0.3:
        return Record("urn:nfc:ext:android.com:pkg", None, b"com.example.app")
    name = "urn:nfc:ext:{}.com:{}".format(random_word(rng, 5).strip("/?=&"), rng.choice(["widget", "t", "x-1"]))
    return Record(name, None, random_bytes(rng, random_payload_length(rng)))


def unknown_record(rng):
    return Record("unknown", None, random_bytes(rng, random_payload_length(rng)))


def chunked_records(rng):
    """A chunked record as ndeflib encodes it: a first record followed by TNF 6 (unchanged) records."""
    first = rng.choice([media_record, external_record, absolute_uri_record, unknown_record])(rng)
    maybe_name(rng, first)
    chunks = [first]
    for _ in range(rng.randint(1, 3)):
        chunks.append(Record("unchanged", None, random_bytes(rng, rng.choice([0, 1, 7, 200, 300]))))
    return chunks


KINDS = [text_record, uri_record, smart_poster, media_record, absolute_uri_record, external_record, unknown_record]


def fixed_messages():
    """Hand-picked messages: the spec examples and one record per URI prefix."""
    yield "text hello en", [ndef.TextRecord("hello", "en")]
    yield "uri https://www.example.com", [ndef.UriRecord("https://www.example.com")]
    yield "empty message", [Record()]
    yield "smart poster", [ndef.SmartposterRecord(
        "https://www.nfc-forum.org", {"en-US": "Hello, world", "fr-CA": "Bonjour, le monde"}, "exec")]
    for code, prefix in enumerate(URI_PREFIXES):
        yield "uri prefix 0x{:02x}".format(code), [ndef.UriRecord(prefix + "example")]
    yield "text UTF-16", [ndef.TextRecord("UTF-16 ✓ 🎉", "de", "UTF-16")]
    yield "long media record", [Record("application/octet-stream", None, bytes(range(256)) * 3)]
    yield "vcard", [Record("text/vcard", None, b"BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada\r\nEND:VCARD\r\n")]
    yield "external android.com:pkg", [Record("urn:nfc:ext:android.com:pkg", None, b"com.example")]
    yield "identifier on every kind", [
        maybe_name(random.Random(1), Record("text/plain", "id-1", b"x")),
        Record("unknown", "id-2", b"y"), Record("urn:nfc:wkt:U", "id-3", b"\x04example.com")]


def generate(seed, count):
    rng = random.Random(seed)
    for name, records in fixed_messages():
        yield name, records, False
    for index in range(count):
        records = []
        chunked = False
        for _ in range(rng.randint(1, 5)):
            if rng.random() < 0.08:
                records.extend(chunked_records(rng))
                chunked = True
            elif rng.random() < 0.05:
                records.append(Record())
            else:
                records.append(maybe_name(rng, rng.choice(KINDS)(rng)))
        yield "random {}".format(index), records, chunked


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=20240611)
    parser.add_argument("--count", type=int, default=400)
    arguments = parser.parse_args()
    for name, records, chunked in generate(arguments.seed, arguments.count):
        octets = b"".join(ndef.message_encoder(records))
        line = {"name": name, "hex": octets.hex(), "chunked": chunked, "records": ndef_view.full_view(octets)}
        sys.stdout.write(json.dumps(line, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
