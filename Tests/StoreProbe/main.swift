// Saves readers to the store at the path given, for ever, as fast as it can, announcing each save on
// standard output ("begin N", "end N"), so that a test can kill it with SIGKILL at any point of a save
// and check that the store is never torn.
import Foundation
import ReaderCore
import ReaderKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

guard CommandLine.arguments.count == 2 else {
  FileHandle.standardError.write(Data("usage: readerkit-store-probe FILE\n".utf8))
  exit(64)
}
let store = FileReaderStore(fileURL: URL(fileURLWithPath: CommandLine.arguments[1]))
/// Writes a line to standard output at once, unbuffered.
func announce(_ line: String) {
  let bytes = Array((line + "\n").utf8)
  _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

var number = 0
while true {
  number += 1
  announce("begin \(number)")
  do {
    try store.saveLastReader(SavedReader(serialNumber: "STRM2-\(number)", locationId: "tml_\(number)"))
  } catch {
    FileHandle.standardError.write(Data("save \(number) failed: \(error)\n".utf8))
    exit(1)
  }
  announce("end \(number)")
}
