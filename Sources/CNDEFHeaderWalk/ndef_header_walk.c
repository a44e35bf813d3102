// A bare baseline for reader-bench: the cheapest faithful structure check of an NDEF message, so that the
// benchmark can say how far NFCKit's structure decode (which also builds the record values) is from it.
#include "ndef_header_walk.h"

static uint64_t add_bytes(const uint8_t *bytes, size_t count) {
  uint64_t sum = 0;
  for (size_t index = 0; index < count; index++) sum += bytes[index];
  return sum;
}

long ndef_header_walk(const uint8_t *bytes, size_t count, long max_records, uint64_t max_payload, uint64_t *sum) {
  if (count == 0) return -1;
  size_t position = 0;
  long records = 0;
  long budget = max_records;
  int in_chunks = 0;
  uint64_t chunked_total = 0;
  for (;;) {
    if (position >= count) return -1;
    if (budget-- <= 0) return -1;
    uint8_t flags = bytes[position];
    size_t cursor = position + 1;
    if (cursor >= count) return -1;
    size_t type_length = bytes[cursor++];
    uint64_t payload_length;
    if (flags & 0x10) {
      if (cursor >= count) return -1;
      payload_length = bytes[cursor++];
    } else {
      if (count - cursor < 4) return -1;
      payload_length = (uint64_t)bytes[cursor] << 24 | (uint64_t)bytes[cursor + 1] << 16 |
                       (uint64_t)bytes[cursor + 2] << 8 | bytes[cursor + 3];
      cursor += 4;
    }
    size_t id_length = 0;
    if (flags & 0x08) {
      if (cursor >= count) return -1;
      id_length = bytes[cursor++];
    }
    size_t remaining = count - cursor;
    if (type_length > remaining) return -1;
    remaining -= type_length;
    if (id_length > remaining) return -1;
    remaining -= id_length;
    if (payload_length > remaining) return -1;

    int begin = (flags & 0x80) != 0, end = (flags & 0x40) != 0, chunked = (flags & 0x20) != 0;
    int tnf = flags & 0x07;
    if (begin != (position == 0)) return -1;
    if (chunked && end) return -1;
    if (in_chunks) {
      if (tnf != 6 || type_length != 0 || (flags & 0x08)) return -1;
      chunked_total += payload_length;
    } else {
      switch (tnf) {
      case 0:
        if (type_length != 0 || id_length != 0 || payload_length != 0 || chunked) return -1;
        break;
      case 1: case 2: case 3: case 4:
        if (type_length == 0) return -1;
        break;
      case 5:
        if (type_length != 0) return -1;
        break;
      case 6:
        return -1;
      default:
        break;
      }
      chunked_total = payload_length;
    }
    if (chunked_total > max_payload) return -1;
    size_t payload_start = cursor + type_length + id_length;
    *sum += add_bytes(bytes + payload_start, (size_t)payload_length);
    position = payload_start + (size_t)payload_length;
    in_chunks = chunked;
    if (!chunked) records++;
    if (end) return position == count ? records : -1;
  }
}
