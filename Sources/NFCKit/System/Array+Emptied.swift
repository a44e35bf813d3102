extension Array {
  /// Removes every element and keeps the storage, as `removeAll(keepingCapacity: true)` does, for the
  /// few elements of a buffer that is emptied at every step: one element at a time from the end, each
  /// destroyed by code made for its type, where `removeAll` goes through the general `replaceSubrange`
  /// and destroys the elements through their type's metadata.
  mutating func empty() {
    while !isEmpty { removeLast() }
  }
}
