/// Runs the parser of a typed view on a record on its own, marking the error offsets it reports as
/// relative to the record's payload.
func parsingOnItsOwn<T>(_ parse: () throws(NDEFError) -> T) throws(NDEFError) -> T {
  do {
    return try parse()
  } catch {
    var relative = error
    relative.context["relativeTo"] = "payload"
    throw relative
  }
}

/// The error a typed view reports for a record of another type.
func mismatch(_ record: NDEFRecord, expected: String) -> NDEFError {
  NDEFError(
    .typeMismatch, "the record is TNF \(record.typeNameFormat.rawValue) with type \(record.type.hex)", offset: 0,
    expected: expected, context: ["relativeTo": "payload"])
}
