"""Times ndeflib decoding NDEF messages, as often as asked: python ndef_bench.py FILE

FILE holds one hex message per line; the hex is converted to bytes once, before any timing. Then each line
read on standard input holds a number of passes: the script runs that many passes of
list(ndef.message_decoder(message)) over every message, timing only that loop with time.perf_counter, and
answers with one line of JSON: {"messages": n, "bytes": n, "seconds": s, "errors": n}. It ends at the end
of its input. So the caller can take turns between this and its own measurements without counting the
start of Python.
"""
import json
import sys
import time

import ndef


def main():
    with open(sys.argv[1]) as handle:
        messages = [bytes.fromhex(line.strip()) for line in handle if line.strip()]
    size = sum(len(message) for message in messages)
    for line in sys.stdin:
        if not line.strip():
            continue
        iterations = int(line)
        errors = 0
        start = time.perf_counter()
        for _ in range(iterations):
            for message in messages:
                try:
                    list(ndef.message_decoder(message))
                except Exception:
                    errors += 1
        seconds = time.perf_counter() - start
        print(json.dumps({
            "messages": len(messages) * iterations, "bytes": size * iterations, "seconds": seconds,
            "errors": errors,
        }), flush=True)


if __name__ == "__main__":
    main()
