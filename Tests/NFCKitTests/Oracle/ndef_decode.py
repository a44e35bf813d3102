"""Decodes NDEF messages with ndeflib: one hex message per line on stdin, one JSON line out per message.

Output per input line: {"ok": true, "records": <ndef_view.full_view>} or {"ok": false, "error": "..."}; an
"ok" result also has "strictError" when ndeflib's own message_decoder rejects the message as a whole
(see ndef_view.strict_error).
Blank input lines are skipped; the line "<empty>" stands for the zero-length message. Used by the NFCKit
oracle tests (NFCKit encodes, ndeflib decodes).
"""
import json
import os
import sys

sys.dont_write_bytecode = True  # keep __pycache__ out of the Swift test target's folder
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ndef_view  # noqa: E402


def main():
    for line in sys.stdin:
        text = line.strip()
        if not text:
            continue
        try:
            octets = b"" if text == "<empty>" else bytes.fromhex(text)
            result = {"ok": True, "records": ndef_view.full_view(octets)}
            strict_error = ndef_view.strict_error(octets)
            if strict_error is not None:
                result["strictError"] = strict_error
        except Exception as error:  # report every rejection, whatever ndeflib raised
            result = {"ok": False, "error": "{}: {}".format(type(error).__name__, error)}
        sys.stdout.write(json.dumps(result, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
