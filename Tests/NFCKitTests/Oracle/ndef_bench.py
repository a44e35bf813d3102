"""Times ndeflib decoding NDEF messages: python ndef_bench.py FILE ITERATIONS

FILE holds one hex message per line. The hex is converted to bytes before timing; only the decode loop
(ITERATIONS passes of list(ndef.message_decoder(message)) over every message) is timed, with
time.perf_counter. Prints one JSON object: {"messages": n, "bytes": n, "seconds": s,
"messagesPerSecond": x, "bytesPerSecond": y, "errors": n}.
"""
import json
import sys
import time

import ndef


def main():
    path, iterations = sys.argv[1], int(sys.argv[2])
    with open(path) as handle:
        messages = [bytes.fromhex(line.strip()) for line in handle if line.strip()]
    errors = 0
    start = time.perf_counter()
    for _ in range(iterations):
        for message in messages:
            try:
                list(ndef.message_decoder(message))
            except Exception:
                errors += 1
    seconds = time.perf_counter() - start
    count = len(messages) * iterations
    size = sum(len(message) for message in messages) * iterations
    print(json.dumps({
        "messages": count, "bytes": size, "seconds": seconds, "errors": errors,
        "messagesPerSecond": count / seconds if seconds else 0.0,
        "bytesPerSecond": size / seconds if seconds else 0.0,
    }))


if __name__ == "__main__":
    main()
