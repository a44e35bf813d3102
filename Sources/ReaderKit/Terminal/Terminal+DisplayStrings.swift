extension Terminal {
  /// Text for a reader's input options, as Stripe's `Terminal.stringFromReaderInputOptions(_:)`:
  /// `"Swipe / Insert / Tap"` for all three, `"None"` for none. Unlocalized.
  public static func stringFromReaderInputOptions(_ options: ReaderInputOptions) -> String {
    let names: [(ReaderInputOptions, String)] = [(.swipeCard, "Swipe"), (.insertCard, "Insert"), (.tapCard, "Tap")]
    let present = names.filter { options.contains($0.0) }.map(\.1)
    return present.isEmpty ? "None" : present.joined(separator: " / ")
  }

  /// Text for a reader's display message, as Stripe's `Terminal.stringFromReaderDisplayMessage(_:)`,
  /// e.g. `"Insert Or Swipe Card"`. Unlocalized.
  public static func stringFromReaderDisplayMessage(_ message: ReaderDisplayMessage) -> String {
    switch message {
    case .retryCard: "Retry Card"
    case .insertCard: "Insert Card"
    case .insertOrSwipeCard: "Insert Or Swipe Card"
    case .swipeCard: "Swipe Card"
    case .removeCard: "Remove Card"
    case .multipleContactlessCardsDetected: "Multiple Contactless Cards Detected"
    case .tryAnotherReadMethod: "Try Another Read Method"
    case .tryAnotherCard: "Try Another Card"
    }
  }

  /// Text for a reader event, as Stripe's `Terminal.stringFromReaderEvent(_:)`, e.g. `"Card Inserted"`.
  /// Unlocalized.
  public static func stringFromReaderEvent(_ event: ReaderEvent) -> String {
    switch event {
    case .cardInserted: "Card Inserted"
    case .cardRemoved: "Card Removed"
    }
  }

  /// Text for a reader model, as Stripe's `Terminal.stringFromDeviceType(_:)`: its `displayName`, e.g.
  /// `"Stripe Reader M2"`. Unlocalized.
  public static func stringFromDeviceType(_ deviceType: DeviceType) -> String { deviceType.displayName }

  /// Text for a connection status, as Stripe's `Terminal.stringFromConnectionStatus(_:)`, e.g.
  /// `"Not Connected"`. Unlocalized.
  public static func stringFromConnectionStatus(_ status: ConnectionStatus) -> String {
    switch status {
    case .notConnected: "Not Connected"
    case .discovering: "Discovering"
    case .connecting: "Connecting"
    case .connected: "Connected"
    case .reconnecting: "Reconnecting"
    }
  }

  /// Text for a payment status, as Stripe's `Terminal.stringFromPaymentStatus(_:)`, e.g. `"Not Ready"`.
  /// Unlocalized.
  public static func stringFromPaymentStatus(_ status: PaymentStatus) -> String {
    switch status {
    case .notReady: "Not Ready"
    case .ready: "Ready"
    case .waitingForInput: "Waiting For Input"
    case .processing: "Processing"
    }
  }
}
