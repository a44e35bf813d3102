"""ndeflib's record-by-record view of an NDEF message, shared by the oracle scripts.

A view is a list of dicts, one per record *as ndeflib returns them* (ndeflib does not reassemble
chunks: a chunked record appears as its first chunk followed by its TNF 6 chunks):

  {"tnf": int, "type": hex, "id": hex, "payload": hex, "mb": bool, "me": bool, "cf": bool,
   ... decoded fields for the types ndeflib knows ...}

Decoded fields: Text -> "text", "language", "encoding" ("UTF-8"/"UTF-16"); URI -> "uri" (ndeflib's
expanded IRI); Smart Poster -> "records" (the nested message's view), "uri", "titles"
({language: text}), "action", "size", "resourceType". Each Text, URI and Smart Poster record is decoded
by ndeflib on its own (as a one-record message); if that fails the record gets "typedError" instead.

The raw fields come from decoding with no known types (so "payload" is the bytes on the wire, not
ndeflib's re-encoding of a decoded record); the flags come from the header bytes as ndeflib walks them.
"""
import io

import ndef
from ndef.record import Record


def _flags(octets):
    """Header flags of each record, walking the message the way ndeflib reads it."""
    flags = []
    offset = 0
    while offset < len(octets):
        header = octets[offset]
        sr, il = header & 0x10, header & 0x08
        type_length = octets[offset + 1]
        if sr:
            payload_length = octets[offset + 2]
            offset += 3
        else:
            payload_length = int.from_bytes(octets[offset + 2:offset + 6], "big")
            offset += 6
        id_length = 0
        if il:
            id_length = octets[offset]
            offset += 1
        offset += type_length + id_length + payload_length
        flags.append({"mb": bool(header & 0x80), "me": bool(header & 0x40), "cf": bool(header & 0x20)})
        if header & 0x40:
            break
    return flags


def raw_records(octets):
    """ndeflib's generic records (type string, name, data), no typed decoding."""
    return list(ndef.message_decoder(bytes(octets), known_types={}))


def _tnf_and_type(record):
    tnf, type_bytes = Record._encode_type(record.type)
    return tnf, type_bytes


def view(octets):
    """The view of a whole message; raises ndef.DecodeError (or ValueError) when ndeflib rejects it."""
    octets = bytes(octets)
    raws = raw_records(octets)
    flags = _flags(octets)
    records = []
    for index, raw in enumerate(raws):
        tnf, type_bytes = _tnf_and_type(raw)
        entry = {
            "tnf": tnf,
            "type": type_bytes.hex(),
            "id": raw.name.encode("latin").hex(),
            "payload": bytes(raw.data).hex(),
        }
        entry.update(flags[index])
        if tnf == 1 and type_bytes in (b"T", b"U", b"Sp"):
            # Each record is decoded on its own: ndeflib's message_decoder decodes the records after a
            # Smart Poster with the Smart Poster's local types (so a second Sp stays a generic record).
            try:
                alone = b"".join(ndef.message_encoder([raw]))
                _add_typed_fields(entry, list(ndef.message_decoder(alone))[0])
            except Exception as error:  # ndeflib raises DecodeError, and ValueError for some bad fields
                entry["typedError"] = "{}: {}".format(type(error).__name__, error)
        records.append(entry)
    return records


def _add_typed_fields(entry, record):
    if isinstance(record, ndef.TextRecord):
        entry["text"] = record.text
        entry["language"] = record.language
        entry["encoding"] = record.encoding
    elif isinstance(record, ndef.UriRecord):
        entry["uri"] = record.iri
    elif isinstance(record, ndef.SmartposterRecord):
        entry["uri"] = record.resource.iri
        entry["titles"] = dict(record.titles)
        if record.action_records:
            entry["action"] = record.action
        if record.size_records:
            entry["size"] = record.resource_size
        if record.type_records:
            entry["resourceType"] = record.resource_type


def full_view(octets):
    """view() with the nested message of every Smart Poster expanded, from its raw payload."""
    records = view(octets)
    for entry in records:
        if entry["tnf"] == 1 and entry["type"] == b"Sp".hex() and "typedError" not in entry:
            entry["records"] = full_view(bytes.fromhex(entry["payload"]))
    return records


def strict_error(octets):
    """The error ndeflib's own message_decoder (all known types, strict) raises for the whole message, or None.

    This is ndeflib's verdict on the message as an application would get it; it can differ from view(),
    which decodes the typed records one by one.
    """
    try:
        list(ndef.message_decoder(bytes(octets)))
        return None
    except Exception as error:
        return "{}: {}".format(type(error).__name__, error)
