// A bare baseline for reader-bench: a validating walk over the record headers of one NDEF message, in C.
#ifndef NDEF_HEADER_WALK_H
#define NDEF_HEADER_WALK_H

#include <stddef.h>
#include <stdint.h>

/// Walks the record headers of one NDEF message that fills `bytes[0..<count]`, checking the structure rules
/// NFCKit's decoder checks without its payload checks (MB on the first record only, ME on the last with
/// nothing after it, every length within the input, the TNF rules, chunks of TNF 6 without type or IL, at
/// most `max_records` records and chunks, payloads of at most `max_payload` bytes), and adds every payload
/// byte to `*sum`. Returns the number of logical records (chunks joined), or -1 when the message is
/// malformed. Allocates nothing.
long ndef_header_walk(const uint8_t *bytes, size_t count, long max_records, uint64_t max_payload, uint64_t *sum);

#endif
