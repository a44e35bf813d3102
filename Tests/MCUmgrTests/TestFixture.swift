import MCUmgr
import Testing

/// A value the tests need, built with the code under test. When that code throws, the failure is
/// recorded against the running test, which goes on with `fallback`: a broken build then fails the
/// tests that use the value instead of trapping and ending every test in the process.
func fixture<Value>(
  or fallback: @autoclosure () -> Value, sourceLocation: SourceLocation = #_sourceLocation,
  _ make: () throws -> Value
) -> Value {
  do {
    return try make()
  } catch {
    Issue.record("test set-up failed: \(error)", sourceLocation: sourceLocation)
    return fallback()
  }
}

/// The operation of the answer to `request`; a request whose operation has no answer (a bug in the
/// test or in `SMPHeader.Operation.response`) is recorded as an issue and answered as a read.
func responseOperation(_ request: SMPRequest, sourceLocation: SourceLocation = #_sourceLocation) -> SMPHeader.Operation
{
  guard let operation = request.operation.response else {
    Issue.record("\(request.operation) has no response operation", sourceLocation: sourceLocation)
    return .readResponse
  }
  return operation
}
