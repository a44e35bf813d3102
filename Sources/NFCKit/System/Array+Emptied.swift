extension Array {
  /// Removes every element and keeps the storage, as `removeAll(keepingCapacity: true)` does, for the
  /// few elements of a buffer that is emptied at every step: one element at a time from the end, each
  /// destroyed by code made for its type, where `removeAll` goes through the general `replaceSubrange`
  /// and destroys the elements through their type's metadata.
  mutating func empty() {
    while !isEmpty { removeLast() }
  }
}

extension Array {
  /// The element at `index`, moved out with `placeholder` left in its place: for a buffer whose elements
  /// are each read once before it is emptied, so an element handed on is neither copied nor destroyed
  /// twice (a placeholder without payload costs nothing to destroy).
  @inline(__always)
  mutating func take(at index: Int, leaving placeholder: Element) -> Element {
    var element = placeholder
    swap(&element, &self[index])
    return element
  }
}
