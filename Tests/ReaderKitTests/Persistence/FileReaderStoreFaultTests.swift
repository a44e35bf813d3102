import Foundation
import ReaderCore
import Testing

@testable import ReaderKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

private let old = SavedReader(serialNumber: "STRM2-0001", locationId: "tml_1", deviceType: .stripeM2)
private let new = SavedReader(serialNumber: "CHB20-0042", locationId: "tml_2", deviceType: .chipper2X)
private let path = "/home/u/.local/share/readerkit/last-reader.json"
private let corruptBytes = Array("{\"serialNumber\": tr".utf8)

/// What is on the disk before the save under test.
enum Before: String, CaseIterable, Sendable {
  /// Not even the directories exist: the save creates them.
  case nothing
  /// The directories exist, but no record.
  case emptyDirectory
  /// A valid record.
  case record
  /// A corrupt record, which must be kept aside, never lost.
  case corruptRecord

  func disk() throws -> SimulatedDisk {
    let disk = SimulatedDisk()
    switch self {
    case .nothing:
      disk.place([], at: "/home/u/placeholder")
    case .emptyDirectory:
      disk.place([], at: "/home/u/.local/share/readerkit/placeholder")
      try disk.unlink("/home/u/.local/share/readerkit/placeholder")
      disk.syncEverything()
    case .record:
      try FileReaderStore(fileURL: URL(fileURLWithPath: path), fileSystem: disk).saveLastReader(old)
    case .corruptRecord:
      disk.place(corruptBytes, at: path)
    }
    disk.resetCounter()
    return disk
  }
}

private func store(_ disk: SimulatedDisk) -> FileReaderStore {
  FileReaderStore(fileURL: URL(fileURLWithPath: path), fileSystem: disk)
}

/// Where the corrupt record's bytes are now: at the path or in a `.corrupt-<n>` copy.
private func corruptBytesSurvive(on disk: SimulatedDisk) -> Bool {
  (0...3).contains { n in disk.contents(n == 0 ? path : "\(path).corrupt-\(n)") == corruptBytes }
}

/// Checks what a relaunched app finds after a save was interrupted: the old state or the new record,
/// nothing torn, nothing lost.
private func expectOldOrNew(
  on disk: SimulatedDisk, before: Before, saveSucceeded: Bool, sourceLocation: SourceLocation = #_sourceLocation
) {
  let loaded = Result { () throws(ReaderError) in try store(disk).loadLastReader() }
  switch (before, loaded) {
  case (_, .success(new)):
    break
  case (_, .success(_)) where saveSucceeded:
    Issue.record("a save that succeeded was lost: \(loaded)", sourceLocation: sourceLocation)
  case (.record, .success(old)), (.nothing, .success(nil)), (.emptyDirectory, .success(nil)):
    break
  case (.corruptRecord, .failure(let error)) where error.code == .storeCorrupt && !saveSucceeded:
    break
  default:
    Issue.record("found \(loaded) after an interrupted save over \(before)", sourceLocation: sourceLocation)
  }
  if before == .corruptRecord {
    #expect(corruptBytesSurvive(on: disk), "the corrupt record's bytes were lost", sourceLocation: sourceLocation)
  }
}

@Suite struct FileReaderStoreFaultTests {
  /// How many system calls a save over `before` makes when nothing fails.
  private func callsOfASave(over before: Before) throws -> Int {
    let disk = try before.disk()
    try store(disk).saveLastReader(new)
    return disk.callCount
  }

  @Test(arguments: Before.allCases)
  func aPowerLossAtEveryCallOfASaveLeavesTheOldRecordOrTheNewOne(before: Before) throws {
    let total = try callsOfASave(over: before)
    #expect(total > 5)
    for cut in 0...total {
      let disk = try before.disk()
      disk.cutPower(afterCalls: cut)
      // A save may still succeed when only best-effort calls after the flushes were cut.
      let saved = (try? store(disk).saveLastReader(new)) != nil
      if cut == total { #expect(saved) }
      disk.powerCycle()
      expectOldOrNew(on: disk, before: before, saveSucceeded: saved)
    }
  }

  @Test(arguments: Before.allCases)
  func aPowerLossAtEveryCallOfAClearNeverTearsTheRecord(before: Before) throws {
    let counting = try before.disk()
    try store(counting).clearLastReader()
    let total = counting.callCount
    for cut in 0...total {
      let disk = try before.disk()
      disk.cutPower(afterCalls: cut)
      let cleared = (try? store(disk).clearLastReader()) != nil
      disk.powerCycle()
      let loaded = Result { () throws(ReaderError) in try store(disk).loadLastReader() }
      switch (before, loaded) {
      case (_, .success(nil)): break
      case (.record, .success(old)) where !cleared: break
      case (.corruptRecord, .failure(let error)) where error.code == .storeCorrupt && !cleared: break
      default: Issue.record("found \(loaded) after a clear cut at call \(cut) of \(total) over \(before)")
      }
      if before == .corruptRecord { #expect(corruptBytesSurvive(on: disk)) }
    }
  }

  @Test(arguments: Before.allCases)
  func aCrashAtEveryCallOfASaveLeavesTheOldRecordOrTheNewOne(before: Before) throws {
    let total = try callsOfASave(over: before)
    for cut in 0..<total {
      let disk = try before.disk()
      disk.cutPower(afterCalls: cut)
      let saved = (try? store(disk).saveLastReader(new)) != nil
      disk.processDied()  // the kernel's view of the disk stays as it was at the crash
      expectOldOrNew(on: disk, before: before, saveSucceeded: saved)
      // The next save cleans up and succeeds.
      try store(disk).saveLastReader(new)
      #expect(try store(disk).loadLastReader() == new)
      #expect(!(try disk.contentsOfDirectory("/home/u/.local/share/readerkit")).contains { $0.contains(".tmp-") })
    }
  }

  @Test(arguments: Before.allCases, [EIO, ENOSPC, EACCES, EROFS, EDQUOT])
  func failingAnyOneCallOfASaveKeepsTheOldRecordAndReportsTheErrno(before: Before, code: Int32) throws {
    let total = try callsOfASave(over: before)
    for number in 1...total {
      let disk = try before.disk()
      disk.failCall(number, errno: code)
      let result = Result { () throws(ReaderError) in try store(disk).saveLastReader(new) }
      let loaded = Result { () throws(ReaderError) in try store(disk).loadLastReader() }
      switch result {
      case .success:
        #expect(loaded == .success(new), "call \(number) of \(total) (\(disk.failedCall ?? "none")) failed")
      case .failure(let error):
        #expect(error.code == .storeUnavailable)
        #expect(error.cause == .errno(code), "call \(number) of \(total): \(error)")
        #expect(error.context["errno"] == "\(code)")
        if error.context["step"] == "syncDirectory" {
          #expect(loaded == .success(new), "the rename happened before the failed flush")
        } else {
          switch (before, loaded) {
          case (.record, .success(old)), (.nothing, .success(nil)), (.emptyDirectory, .success(nil)): break
          case (.corruptRecord, .failure(let error)) where error.code == .storeCorrupt: break
          default: Issue.record("call \(number) of \(total) failed and left \(loaded) over \(before)")
          }
        }
        let names = (try? disk.contentsOfDirectory("/home/u/.local/share/readerkit")) ?? []
        #expect(!names.contains { $0.contains(".tmp-") }, "a temporary file is left: \(names)")
      }
      if before == .corruptRecord { #expect(corruptBytesSurvive(on: disk)) }
    }
  }

  @Test(arguments: Before.allCases)
  func interruptedCallsAndShortWritesStillSaveTheWholeRecord(before: Before) throws {
    for maximumWrite in [1, 3, 7, Int.max] {
      let disk = try before.disk()
      disk.interruptEveryCall = true
      disk.maximumWrite = maximumWrite
      try store(disk).saveLastReader(new)
      disk.interruptEveryCall = false
      disk.powerCycle()  // and it is durable
      #expect(try store(disk).loadLastReader() == new)
    }
  }

  @Test func aRecordThatGrowsPastTheLimitWhileBeingReadIsCorruptAndUntouched() throws {
    let disk = SimulatedDisk()
    let huge = [UInt8](repeating: 0x20, count: FileReaderStore.maximumFileSize + 10)
    disk.place(huge, at: path)
    let error = #expect(throws: ReaderError.self) { try store(disk).loadLastReader() }
    #expect(error?.code == .storeCorrupt)
    #expect(error?.context["size"] == "\(huge.count)")
    #expect(disk.contents(path) == huge)
  }
}
