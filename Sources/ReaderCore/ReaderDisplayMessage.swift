/// A prompt a reader asks the app to show while it reads a card, as Stripe's `ReaderDisplayMessage`
/// (same cases, same order). ReaderKit does not collect payments, so nothing reports them; the type
/// lets a `MobileReaderDelegate` written for Stripe's SDK compile.
public enum ReaderDisplayMessage: UInt, Sendable, Hashable, CaseIterable {
  /// Retry the presented card.
  case retryCard
  /// Insert the presented card.
  case insertCard
  /// Insert or swipe the presented card.
  case insertOrSwipeCard
  /// Swipe the presented card.
  case swipeCard
  /// Remove the presented card.
  case removeCard
  /// Several contactless cards are in the field; present only one.
  case multipleContactlessCardsDetected
  /// The card could not be read; try another way of presenting it.
  case tryAnotherReadMethod
  /// The card is invalid; try another card.
  case tryAnotherCard
}
