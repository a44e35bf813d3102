import Testing

/// A value the tests need, built with the code under test. When that code throws, the failure is
/// recorded against the running test, which goes on with `fallback`: a broken build then fails the
/// tests that use the value instead of trapping and ending every test in the process.
public func fixture<Value>(
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
