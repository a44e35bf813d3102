/// Something a reader reports about the card in it, as Stripe's `ReaderEvent` (same cases, same
/// order). ReaderKit does not collect payments, so nothing reports them; the type lets a
/// `MobileReaderDelegate` written for Stripe's SDK compile.
public enum ReaderEvent: UInt, Sendable, Hashable, CaseIterable {
  /// A card was inserted.
  case cardInserted
  /// A card was removed.
  case cardRemoved
}
