import MCUmgr
import Testing

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
