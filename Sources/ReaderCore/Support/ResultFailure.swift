extension Result {
  /// The error of a failure; nil for a success.
  package var failure: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}
