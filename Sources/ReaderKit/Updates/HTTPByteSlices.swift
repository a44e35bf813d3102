/// An `HTTPByteSource` over bytes already in memory, handed out in the slices given — an answer cut
/// wherever a test or a fuzzer chooses, one slice per read at most — then the end of the stream.
package struct HTTPByteSlices: HTTPByteSource {
  private let slices: [[UInt8]]
  private var index = 0
  private var offset = 0

  /// A source that hands out `slices` in order; empty slices are skipped.
  package init(_ slices: [[UInt8]]) {
    self.slices = slices.filter { !$0.isEmpty }
  }

  /// A source that hands out `bytes` cut after each of the `sizes` in turn, the sizes used again from
  /// the first once they run out; a size of 0 counts as 1.
  package init(_ bytes: [UInt8], cutEvery sizes: [Int]) {
    var slices: [[UInt8]] = []
    var start = 0
    var next = 0
    while start < bytes.count {
      let size = sizes.isEmpty ? bytes.count : max(1, sizes[next % sizes.count])
      slices.append(Array(bytes[start..<min(bytes.count, start + size)]))
      start += size
      next += 1
    }
    self.init(slices)
  }

  /// Copies what is left of the current slice, at most `buffer.count` bytes; 0 once every slice is out.
  package mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
    guard index < slices.count else { return 0 }
    let slice = slices[index]
    let count = min(buffer.count, slice.count - offset)
    slice.withUnsafeBytes { bytes in
      buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
    }
    offset += count
    if offset == slice.count {
      index += 1
      offset = 0
    }
    return count
  }
}
