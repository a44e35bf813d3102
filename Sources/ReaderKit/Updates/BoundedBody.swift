import Foundation

/// What a bounded read of a file or an HTTP body produced.
package enum BoundedBody: Sendable, Equatable {
  /// All the bytes, no more than the bound.
  case complete(Data)
  /// More than `limit` bytes: reading stopped there and the bytes were dropped.
  case exceeded(limit: Int)
}
