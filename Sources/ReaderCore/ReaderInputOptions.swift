/// The ways a reader waiting for a card lets the customer present it, as Stripe's
/// `ReaderInputOptions` (same bits). ReaderKit does not collect payments, so nothing reports them;
/// the type lets a `MobileReaderDelegate` written for Stripe's SDK compile.
public struct ReaderInputOptions: OptionSet, Sendable, Hashable {
  public let rawValue: UInt
  /// Creates options from their bits.
  public init(rawValue: UInt) { self.rawValue = rawValue }

  /// No input is possible.
  public static let none: ReaderInputOptions = []
  /// Swipe a magnetic-stripe card.
  public static let swipeCard = ReaderInputOptions(rawValue: 1 << 0)
  /// Insert a chip card.
  public static let insertCard = ReaderInputOptions(rawValue: 1 << 1)
  /// Tap a contactless card.
  public static let tapCard = ReaderInputOptions(rawValue: 1 << 2)
}
