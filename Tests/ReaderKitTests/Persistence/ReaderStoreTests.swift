import Dispatch
import Foundation
import ReaderCore
import Testing

@testable import ReaderKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

private let m2 = SavedReader(serialNumber: "STRM2-0001", locationId: "tml_1", deviceType: .stripeM2)
private let chipper = SavedReader(serialNumber: "CHB20-0042", locationId: "tml_2", deviceType: .chipper2X)
private let validBytes = Data(
  #"{"deviceType":"stripeM2","locationId":"tml_1","serialNumber":"STRM2-0001","version":1}"#.utf8)

/// Runs `body` with a fresh, empty directory that is removed afterwards.
private func withTemporaryDirectory(_ body: (URL) throws -> Void) throws {
  let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("ReaderStoreTests-\(UUID().uuidString)", isDirectory: true)
  try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  try body(directory)
}

private func listing(_ directory: URL) throws -> [String] {
  try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
}

private func bytes(_ url: URL) throws -> Data { try Data(contentsOf: url) }

@Suite struct ReaderStoreTests {
  // MARK: Round trip and missing file

  @Test func savedReaderLoadsBackAndASecondSaveReplacesIt() throws {
    try withTemporaryDirectory { directory throws in
      let store = FileReaderStore(fileURL: directory.appendingPathComponent("last-reader.json"))
      try store.saveLastReader(m2)
      #expect(try store.loadLastReader() == m2)
      try store.saveLastReader(chipper)
      #expect(try store.loadLastReader() == chipper)
      let noModel = SavedReader(serialNumber: "WPC32-7", locationId: "tml_3")
      try store.saveLastReader(noModel)
      #expect(try store.loadLastReader() == noModel)
      #expect(try listing(directory) == ["last-reader.json"])
    }
  }

  @Test func simulatedFlagIsKeptAndARecordWithoutItIsAReaderOfRealHardware() throws {
    try withTemporaryDirectory { directory throws in
      let file = directory.appendingPathComponent("last-reader.json")
      let store = FileReaderStore(fileURL: file)
      let simulated = SavedReader(serialNumber: "STRM2-9", locationId: "tml_9", deviceType: .stripeM2, simulated: true)
      try store.saveLastReader(simulated)
      #expect(try store.loadLastReader() == simulated)
      #expect(String(decoding: try bytes(file), as: UTF8.self).contains("\"simulated\":true"))

      try store.saveLastReader(m2)
      #expect(!String(decoding: try bytes(file), as: UTF8.self).contains("simulated"))
      #expect(try store.loadLastReader()?.simulated == false)
    }
    let old = Data(#"{"serialNumber":"STRM2-1","locationId":"tml_1","deviceType":"stripeM2"}"#.utf8)
    #expect(try JSONDecoder().decode(SavedReader.self, from: old).simulated == false)
  }

  @Test func fileHoldsVersionedJSONWithPrivatePermissions() throws {
    try withTemporaryDirectory { directory throws in
      let file = directory.appendingPathComponent("nested/dirs/last-reader.json")
      try FileReaderStore(fileURL: file).saveLastReader(m2)
      let text = try #require(String(data: try bytes(file), encoding: .utf8))
      #expect(text == String(decoding: validBytes, as: UTF8.self) + "\n")

      var info = stat()
      #expect(stat(file.path, &info) == 0)
      #expect(info.st_mode & 0o777 == 0o600)
      #expect(stat(file.deletingLastPathComponent().path, &info) == 0)
      #expect(info.st_mode & 0o777 == 0o700)
    }
  }

  @Test func missingFileOrDirectoryLoadsAsNilAndCreatesNothing() throws {
    try withTemporaryDirectory { directory throws in
      let store = FileReaderStore(fileURL: directory.appendingPathComponent("absent/last-reader.json"))
      #expect(try store.loadLastReader() == nil)
      #expect(try listing(directory) == [])
    }
  }

  @Test func aDeviceTypeThatNamesNoKnownModelIsCorruptAndNamesTheValue() throws {
    try withTemporaryDirectory { directory throws in
      let file = directory.appendingPathComponent("last-reader.json")
      try Data(#"{"version":1,"serialNumber":"X-1","locationId":"tml_1","deviceType":"toaster"}"#.utf8)
        .write(to: file)
      let error = #expect(throws: ReaderError.self) { try FileReaderStore(fileURL: file).loadLastReader() }
      #expect(error?.code == .storeCorrupt)
      #expect(error?.context["field"] == "deviceType")
      #expect(error?.context["value"] == "toaster")
    }
  }

  @Test func reasonsSpeakOfJSONNeverOfSwiftTypesOrEmptyFieldNames() throws {
    let cases = [
      ("null", "the record is not a JSON object"), ("\"text\"", "the record is not a JSON object"),
      (#"{"version":1,"serialNumber":5,"locationId":"B"}"#, "the field serialNumber is not a string"),
      (#"{"version":1,"serialNumber":"A","locationId":null}"#, "the field locationId is not a string"),
      (
        #"{"version":1,"serialNumber":"A","locationId":"B","simulated":"yes"}"#,
        "the field simulated is not true or false"
      ),
      (#"{"version":1,"serialNumber":"A","locationId":""}"#, "the field locationId is empty"),
      (#"{"version":1,"serialNumber":" ","locationId":"B"}"#, "the field serialNumber is blank"),
    ]
    try withTemporaryDirectory { directory throws in
      let file = directory.appendingPathComponent("last-reader.json")
      for (text, reason) in cases {
        try Data(text.utf8).write(to: file)
        let error = #expect(throws: ReaderError.self) { try FileReaderStore(fileURL: file).loadLastReader() }
        #expect(error?.context["reason"] == reason, "\(text)")
        #expect(error?.message == "the saved reader is corrupt: \(reason)", "\(text)")
      }
    }
  }

  // MARK: Checking before a save

  @Test func checkCanSaveAcceptsAWritableDirectoryOrOneToCreateAndChangesNothing() throws {
    try withTemporaryDirectory { directory throws in
      try FileReaderStore(fileURL: directory.appendingPathComponent("last-reader.json")).checkCanSave()
      try FileReaderStore(fileURL: directory.appendingPathComponent("a/b/last-reader.json")).checkCanSave()
      let corrupt = directory.appendingPathComponent("corrupt.json")
      try Data("garbage".utf8).write(to: corrupt)
      try FileReaderStore(fileURL: corrupt).checkCanSave()
      #expect(try listing(directory) == ["corrupt.json"])
      #expect(try bytes(corrupt) == Data("garbage".utf8))
    }
  }

  @Test func checkCanSaveRefusesWhatASaveWouldFailOn() throws {
    try withTemporaryDirectory { directory throws in
      let plainFile = directory.appendingPathComponent("plain")
      try Data("x".utf8).write(to: plainFile)
      let readOnly = directory.appendingPathComponent("read-only", isDirectory: true)
      try FileManager.default.createDirectory(at: readOnly, withIntermediateDirectories: false)
      // Root may write into a directory without write permission, but not into one of /proc.
      let unwritable = getuid() == 0 ? "/proc/version" : readOnly.appendingPathComponent("last-reader.json").path
      #expect(chmod(readOnly.path, 0o500) == 0)
      defer { _ = chmod(readOnly.path, 0o700) }
      let cases: [(path: String, reason: String)] = [
        (directory.path, "the path is a directory"),
        (plainFile.appendingPathComponent("last-reader.json").path, "Not a directory"),
        (unwritable, getuid() == 0 ? "No such file or directory" : "Permission denied"),
      ]
      for (path, reason) in cases {
        let error = #expect(throws: ReaderError.self) {
          try FileReaderStore(fileURL: URL(fileURLWithPath: path)).checkCanSave()
        }
        #expect(error?.code == .storeUnavailable, "\(path)")
        #expect(error?.context["path"] == path)
        #expect(error?.context["reason"]?.contains(reason) == true, "\(path): \(String(describing: error))")
      }
      #expect(try listing(readOnly) == [])
    }
  }

  @Test func urlThatNamesNoFileIsUnavailable() {
    for url in [URL(string: "https://example.com/last-reader.json")!, URL(fileURLWithPath: "/")] {
      let store = FileReaderStore(fileURL: url)
      #expect(throws: ReaderError.self) { try store.loadLastReader() }
      let error = #expect(throws: ReaderError.self) { try store.saveLastReader(m2) }
      #expect(error?.code == .storeUnavailable)
    }
  }

  // MARK: Default location

  @Test func defaultLocationUsesAbsoluteXDGDataHome() {
    let url = FileReaderStore.defaultLocation(environment: ["XDG_DATA_HOME": "/xdg/data", "HOME": "/home/u"])
    #expect(url.path == "/xdg/data/readerkit/last-reader.json")
    let slash = FileReaderStore.defaultLocation(environment: ["XDG_DATA_HOME": "/xdg/data/", "HOME": "/home/u"])
    #expect(slash.path == "/xdg/data/readerkit/last-reader.json")
  }

  @Test(arguments: ["relative/data", "", "~/data", "./data"])
  func defaultLocationIgnoresRelativeOrEmptyXDGDataHome(_ xdg: String) {
    let url = FileReaderStore.defaultLocation(environment: ["XDG_DATA_HOME": xdg, "HOME": "/home/u"])
    #expect(url.path == "/home/u/.local/share/readerkit/last-reader.json")
  }

  @Test func terminalsPersistToThePlatformStoreByDefault() throws {
    #if canImport(Darwin)
      #expect(Terminal.platformStore() is UserDefaultsReaderStore)
    #else
      let store = try #require(Terminal.platformStore() as? FileReaderStore)
      #expect(store.fileURL == FileReaderStore.defaultLocation())
    #endif
  }

  @Test func defaultLocationFallsBackToHome() {
    let url = FileReaderStore.defaultLocation(environment: ["HOME": "/home/u"])
    #expect(url.path == "/home/u/.local/share/readerkit/last-reader.json")
  }

  @Test func defaultLocationWithoutHomeUsesThePasswordDatabase() throws {
    let entry = try #require(getpwuid(getuid()))
    let home = String(cString: entry.pointee.pw_dir)
    for environment: [String: String] in [[:], ["HOME": "relative"]] {
      let url = FileReaderStore.defaultLocation(environment: environment)
      #expect(
        url.path == URL(fileURLWithPath: home).appendingPathComponent(".local/share/readerkit/last-reader.json").path)
    }
  }

  // MARK: Corrupt files

  struct CorruptCase: Sendable, CustomTestStringConvertible {
    var name: String
    var bytes: [UInt8]
    /// Context entries the error must carry (besides `path` and `reason`).
    var context: [String: String]
    var testDescription: String { name }

    init(_ name: String, _ text: String, _ context: [String: String]) {
      self.init(name, Array(text.utf8), context)
    }
    init(_ name: String, _ bytes: [UInt8], _ context: [String: String]) {
      self.name = name
      self.bytes = bytes
      self.context = context
    }
  }

  static let corruptCases: [CorruptCase] = [
    CorruptCase("empty", "", ["offset": "0"]),
    CorruptCase("white space only", "  \n", ["offset": "3"]),
    CorruptCase("garbage", "hello, world", ["offset": "0"]),
    CorruptCase("binary garbage", [0x00, 0xFF, 0x13, 0x37], ["offset": "0"]),
    CorruptCase("truncated", #"{"version":1,"serialNumber":"STRM"#, ["offset": "33"]),
    CorruptCase("truncated after a comma", #"{"version":1,"#, ["offset": "13"]),
    CorruptCase("trailing garbage", #"{"version":1} x"#, ["offset": "14"]),
    CorruptCase("bad literal", #"{"version":tru}"#, ["offset": "14"]),
    CorruptCase("not an object", "[1,2]", [:]),
    CorruptCase("null", "null", [:]),
    CorruptCase("location empty", #"{"version":1,"serialNumber":"A","locationId":""}"#, ["field": "locationId"]),
    CorruptCase("serial blank", #"{"version":1,"serialNumber":" \t","locationId":"B"}"#, ["field": "serialNumber"]),
    CorruptCase(
      "unknown device type", #"{"version":1,"serialNumber":"A","locationId":"B","deviceType":"toaster"}"#,
      ["field": "deviceType", "value": "toaster"]),
    CorruptCase("version missing", #"{"serialNumber":"A","locationId":"B"}"#, ["field": "version"]),
    CorruptCase("version is a string", #"{"version":"1","serialNumber":"A","locationId":"B"}"#, ["field": "version"]),
    CorruptCase("version is fractional", #"{"version":1.5,"serialNumber":"A","locationId":"B"}"#, ["field": "version"]),
    CorruptCase("version zero", #"{"version":0,"serialNumber":"A","locationId":"B"}"#, ["version": "0"]),
    CorruptCase("serial is a number", #"{"version":1,"serialNumber":5,"locationId":"B"}"#, ["field": "serialNumber"]),
    CorruptCase("serial is null", #"{"version":1,"serialNumber":null,"locationId":"B"}"#, ["field": "serialNumber"]),
    CorruptCase("location missing", #"{"version":1,"serialNumber":"A"}"#, ["field": "locationId"]),
    CorruptCase(
      "device type is a number", #"{"version":1,"serialNumber":"A","locationId":"B","deviceType":3}"#,
      ["field": "deviceType"]),
    CorruptCase("newer version", #"{"version":2,"serialNumber":"A","locationId":"B","extra":{}}"#, ["version": "2"]),
    CorruptCase(
      "invalid UTF-8",
      Array(#"{"version":1,"serialNumber":""#.utf8) + [0xC3, 0x28] + Array(#"","locationId":"B"}"#.utf8), [:]),
    CorruptCase("nested too deeply", String(repeating: "[", count: 60000), ["offset": "8"]),
    CorruptCase(
      "nested too deeply inside a record", #"{"version":1,"serialNumber":"A","locationId":"B","x":[[[[[[[[]]]]]]]]}"#,
      ["offset": "60"]),
  ]

  @Test func bracketsInsideStringsAreNotNesting() throws {
    try withTemporaryDirectory { directory throws in
      let file = directory.appendingPathComponent("last-reader.json")
      let serial = String(repeating: "[{", count: 20) + #"\"["#
      try Data(#"{"version":1,"serialNumber":"\#(serial)","locationId":"B"}"#.utf8).write(to: file)
      #expect(
        try FileReaderStore(fileURL: file).loadLastReader()?.serialNumber == String(repeating: "[{", count: 20) + "\"[")
    }
  }

  @Test(arguments: corruptCases)
  func corruptFileIsReportedAndLeftUntouchedByLoad(_ corrupt: CorruptCase) throws {
    try withTemporaryDirectory { directory throws in
      let file = directory.appendingPathComponent("last-reader.json")
      try Data(corrupt.bytes).write(to: file)
      let store = FileReaderStore(fileURL: file)

      for _ in 0..<2 {
        let error = #expect(throws: ReaderError.self) { try store.loadLastReader() }
        #expect(error?.code == .storeCorrupt)
        #expect(error?.context["path"] == file.path)
        #expect(error?.context["reason"]?.isEmpty == false)
        for (key, value) in corrupt.context {
          #expect(error?.context[key] == value, "context[\(key)] in \(String(describing: error))")
        }
      }
      #expect(try bytes(file) == Data(corrupt.bytes))
      #expect(try listing(directory) == ["last-reader.json"])
    }
  }

  @Test func saveOverCorruptFileKeepsEachCorruptCopyAside() throws {
    try withTemporaryDirectory { directory throws in
      let file = directory.appendingPathComponent("last-reader.json")
      let store = FileReaderStore(fileURL: file)
      let first = Data("garbage one".utf8)
      let second = Data(#"{"version":7}"#.utf8)

      try first.write(to: file)
      try store.saveLastReader(m2)
      #expect(try store.loadLastReader() == m2)
      #expect(try bytes(directory.appendingPathComponent("last-reader.json.corrupt-1")) == first)

      try second.write(to: file)
      try store.saveLastReader(chipper)
      #expect(try store.loadLastReader() == chipper)
      #expect(try bytes(directory.appendingPathComponent("last-reader.json.corrupt-1")) == first)
      #expect(try bytes(directory.appendingPathComponent("last-reader.json.corrupt-2")) == second)

      // A valid record is simply replaced: no copy.
      try store.saveLastReader(m2)
      #expect(
        try listing(directory) == ["last-reader.json", "last-reader.json.corrupt-1", "last-reader.json.corrupt-2"])
    }
  }

  @Test func clearOverCorruptFileKeepsTheCorruptCopyAside() throws {
    try withTemporaryDirectory { directory throws in
      let file = directory.appendingPathComponent("last-reader.json")
      let corrupt = Data("{\"version\":1,".utf8)
      try corrupt.write(to: file)
      let store = FileReaderStore(fileURL: file)
      try store.clearLastReader()
      #expect(try store.loadLastReader() == nil)
      #expect(try listing(directory) == ["last-reader.json.corrupt-1"])
      #expect(try bytes(directory.appendingPathComponent("last-reader.json.corrupt-1")) == corrupt)
    }
  }

  @Test func oversizedFileIsRefusedButAFileAtTheLimitIsRead() throws {
    try withTemporaryDirectory { directory throws in
      let file = directory.appendingPathComponent("last-reader.json")
      let store = FileReaderStore(fileURL: file)
      let limit = FileReaderStore.maximumFileSize

      var padded = validBytes
      padded.append(Data(repeating: 0x20, count: limit - padded.count))
      try padded.write(to: file)
      #expect(try store.loadLastReader() == m2)

      padded.append(0x20)
      try padded.write(to: file)
      let error = #expect(throws: ReaderError.self) { try store.loadLastReader() }
      #expect(error?.code == .storeCorrupt)
      #expect(error?.context["size"] == "\(limit + 1)")
      #expect(error?.context["limit"] == "\(limit)")
      #expect(try bytes(file) == padded)

      // Saving keeps the oversized file aside too.
      try store.saveLastReader(chipper)
      #expect(try store.loadLastReader() == chipper)
      #expect(try bytes(directory.appendingPathComponent("last-reader.json.corrupt-1")) == padded)
    }
  }

  // MARK: Crashes and failed writes

  @Test func leftoverTemporaryFileFromACrashIsIgnoredAndRemovedByTheNextSave() throws {
    try withTemporaryDirectory { directory throws in
      let file = directory.appendingPathComponent("last-reader.json")
      let store = FileReaderStore(fileURL: file)
      try store.saveLastReader(m2)
      let temporary = directory.appendingPathComponent("last-reader.json.tmp-1a2b3c")
      try Data(#"{"deviceType":"chipper2X","loca"#.utf8).write(to: temporary)

      #expect(try store.loadLastReader() == m2)
      #expect(try listing(directory) == ["last-reader.json", "last-reader.json.tmp-1a2b3c"])

      try store.saveLastReader(chipper)
      #expect(try store.loadLastReader() == chipper)
      #expect(try listing(directory) == ["last-reader.json"])
    }
  }

  @Test func crashDuringWriteLeavesTheOldRecordLoadable() throws {
    try withTemporaryDirectory { directory throws in
      let file = directory.appendingPathComponent("last-reader.json")
      try FileReaderStore(fileURL: file).saveLastReader(m2)
      let before = try bytes(file)

      let dying = FaultyFileSystem(.die { if case .write = $0 { true } else { false } })
      let crashing = FileReaderStore(fileURL: file, fileSystem: dying)
      #expect(throws: ReaderError.self) { try crashing.saveLastReader(chipper) }

      let names = try listing(directory)
      #expect(names.count == 2)
      let temporary = try #require(names.first { $0.hasPrefix("last-reader.json.tmp-") })
      let partial = try bytes(directory.appendingPathComponent(temporary))
      #expect(!partial.isEmpty && partial.count < before.count)

      let store = FileReaderStore(fileURL: file)
      #expect(try store.loadLastReader() == m2)
      #expect(try bytes(file) == before)
      try store.saveLastReader(chipper)
      #expect(try listing(directory) == ["last-reader.json"])
      #expect(try store.loadLastReader() == chipper)
    }
  }

  @Test(arguments: [
    FileReaderStore.Step.createDirectory, .lockDirectory, .createTemporaryFile, .write, .syncFile, .closeFile,
    .rename,
  ])
  func failedStepKeepsTheOldRecordAndLeavesNoTemporaryFile(_ step: FileReaderStore.Step) throws {
    try withTemporaryDirectory { directory throws in
      let file = directory.appendingPathComponent("last-reader.json")
      try FileReaderStore(fileURL: file).saveLastReader(m2)
      let before = try bytes(file)

      let failing = FileReaderStore(fileURL: file, fileSystem: FaultyFileSystem.failing(step, errno: EIO))
      let error = #expect(throws: ReaderError.self) { try failing.saveLastReader(chipper) }
      #expect(error?.code == .storeUnavailable)
      #expect(error?.context["step"] == "\(step)")
      #expect(error?.context["errno"] == "\(EIO)")
      #expect(error?.context["path"] == file.path)

      #expect(try bytes(file) == before)
      #expect(try FileReaderStore(fileURL: file).loadLastReader() == m2)
      #expect(try listing(directory) == ["last-reader.json"])
    }
  }

  @Test func failedLinkAsideLeavesTheCorruptFileAsItWas() throws {
    try withTemporaryDirectory { directory throws in
      let file = directory.appendingPathComponent("last-reader.json")
      let corrupt = Data("not json".utf8)
      try corrupt.write(to: file)
      let failing = FileReaderStore(fileURL: file, fileSystem: FaultyFileSystem.failing(.linkAside, errno: EIO))
      let error = #expect(throws: ReaderError.self) { try failing.saveLastReader(m2) }
      #expect(error?.code == .storeUnavailable)
      #expect(error?.context["step"] == "linkAside")
      #expect(try bytes(file) == corrupt)
      #expect(try listing(directory) == ["last-reader.json"])
    }
  }

  @Test func withoutHardLinksTheCorruptFileIsRenamedAside() throws {
    try withTemporaryDirectory { directory throws in
      let file = directory.appendingPathComponent("last-reader.json")
      let corrupt = Data("not json".utf8)
      try corrupt.write(to: file)
      try Data("older".utf8).write(to: directory.appendingPathComponent("last-reader.json.corrupt-1"))
      let store = FileReaderStore(fileURL: file, fileSystem: FaultyFileSystem.failing(.linkAside, errno: EPERM))
      try store.saveLastReader(m2)
      #expect(try store.loadLastReader() == m2)
      #expect(try bytes(directory.appendingPathComponent("last-reader.json.corrupt-1")) == Data("older".utf8))
      #expect(try bytes(directory.appendingPathComponent("last-reader.json.corrupt-2")) == corrupt)
    }
  }

  @Test func failedDirectoryFlushIsReportedWithTheNewRecordInPlace() throws {
    try withTemporaryDirectory { directory throws in
      let file = directory.appendingPathComponent("last-reader.json")
      try FileReaderStore(fileURL: file).saveLastReader(m2)
      var store = FileReaderStore(fileURL: file, fileSystem: FaultyFileSystem.failing(.syncDirectory, errno: EIO))
      let error = #expect(throws: ReaderError.self) { try store.saveLastReader(chipper) }
      #expect(error?.context["step"] == "syncDirectory")
      #expect(try store.loadLastReader() == chipper)

      // File systems that cannot flush directories at all are accepted.
      store = FileReaderStore(fileURL: file, fileSystem: FaultyFileSystem.failing(.syncDirectory, errno: EINVAL))
      try store.saveLastReader(m2)
      #expect(try store.loadLastReader() == m2)
    }
  }

  @Test func concurrentSavesAllSucceedAndLeaveOneValidRecord() throws {
    try withTemporaryDirectory { directory throws in
      let store = FileReaderStore(fileURL: directory.appendingPathComponent("last-reader.json"))
      let readers = (0..<8).map { SavedReader(serialNumber: "STRM2-\($0)", locationId: "tml_\($0)") }
      let failures = Locked(0)
      DispatchQueue.concurrentPerform(iterations: readers.count) { index in
        for _ in 0..<25 {
          do { try store.saveLastReader(readers[index]) } catch { failures.withLock { $0 += 1 } }
          do { _ = try store.loadLastReader() } catch { failures.withLock { $0 += 1 } }
        }
      }
      #expect(failures.withLock { $0 } == 0)
      let last = try #require(try store.loadLastReader())
      #expect(readers.contains(last))
      #expect(try listing(directory) == ["last-reader.json"])
    }
  }

  // MARK: Unreadable and unwritable locations

  @Test func directoryAtTheFilePathIsUnavailableAndNeverReplaced() throws {
    try withTemporaryDirectory { directory throws in
      let file = directory.appendingPathComponent("last-reader.json")
      try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
      try Data("keep".utf8).write(to: file.appendingPathComponent("inside"))
      let store = FileReaderStore(fileURL: file)

      let loadError = #expect(throws: ReaderError.self) { try store.loadLastReader() }
      #expect(loadError?.code == .storeUnavailable)
      #expect(loadError?.context["path"] == file.path)
      let saveError = #expect(throws: ReaderError.self) { try store.saveLastReader(m2) }
      #expect(saveError?.code == .storeUnavailable)
      let clearError = #expect(throws: ReaderError.self) { try store.clearLastReader() }
      #expect(clearError?.code == .storeUnavailable)

      #expect(try listing(directory) == ["last-reader.json"])
      #expect(try listing(file) == ["inside"])
    }
  }

  @Test(.enabled(if: getuid() != 0, "root reads files regardless of permissions"))
  func fileWithoutReadPermissionIsUnavailable() throws {
    try withTemporaryDirectory { directory throws in
      let file = directory.appendingPathComponent("last-reader.json")
      try validBytes.write(to: file)
      #expect(chmod(file.path, 0) == 0)
      defer { _ = chmod(file.path, 0o600) }
      let store = FileReaderStore(fileURL: file)
      let error = #expect(throws: ReaderError.self) { try store.loadLastReader() }
      #expect(error?.code == .storeUnavailable)
      #expect(error?.context["errno"] == "\(EACCES)")
      #expect(throws: ReaderError.self) { try store.saveLastReader(chipper) }
      _ = chmod(file.path, 0o600)
      #expect(try store.loadLastReader() == m2)
    }
  }

  @Test func saveBelowARegularFileIsUnavailableAndChangesNothing() throws {
    try withTemporaryDirectory { directory throws in
      let blocker = directory.appendingPathComponent("readerkit")
      try validBytes.write(to: blocker)
      for path in ["readerkit/last-reader.json", "readerkit/deeper/last-reader.json"] {
        let store = FileReaderStore(fileURL: directory.appendingPathComponent(path))
        let error = #expect(throws: ReaderError.self) { try store.saveLastReader(chipper) }
        #expect(error?.code == .storeUnavailable)
        #expect(error?.context["step"] == "createDirectory")
        #expect(error?.context["errno"] == "\(ENOTDIR)")
        let loadError = #expect(throws: ReaderError.self) { try store.loadLastReader() }
        #expect(loadError?.code == .storeUnavailable)
        try store.clearLastReader()  // nothing can be saved there, so there is nothing to clear
      }
      #expect(try bytes(blocker) == validBytes)
      #expect(try listing(directory) == ["readerkit"])
    }
  }

  // MARK: Clear

  @Test func clearRemovesTheRecordAndSucceedsWhenThereIsNone() throws {
    try withTemporaryDirectory { directory throws in
      let store = FileReaderStore(fileURL: directory.appendingPathComponent("sub/last-reader.json"))
      try store.clearLastReader()  // no directory yet
      try store.saveLastReader(m2)
      try store.clearLastReader()
      #expect(try store.loadLastReader() == nil)
      try store.clearLastReader()
      #expect(try listing(directory.appendingPathComponent("sub")) == [])
    }
  }

  @Test func failedRemoveKeepsTheRecord() throws {
    try withTemporaryDirectory { directory throws in
      let file = directory.appendingPathComponent("last-reader.json")
      try FileReaderStore(fileURL: file).saveLastReader(m2)
      let failing = FileReaderStore(fileURL: file, fileSystem: FaultyFileSystem.failing(.remove, errno: EIO))
      let error = #expect(throws: ReaderError.self) { try failing.clearLastReader() }
      #expect(error?.code == .storeUnavailable)
      #expect(error?.context["step"] == "remove")
      #expect(try FileReaderStore(fileURL: file).loadLastReader() == m2)
    }
  }
}

// MARK: - In-memory store

extension ReaderStoreTests {
  @Suite struct InMemory {
    @Test func roundTripAndClear() throws {
      let store = InMemoryReaderStore()
      #expect(try store.loadLastReader() == nil)
      try store.saveLastReader(m2)
      #expect(try store.loadLastReader() == m2)
      try store.clearLastReader()
      #expect(try store.loadLastReader() == nil)
      #expect(InMemoryReaderStore(chipper).savedReader == chipper)
    }

    @Test func failNextSaveFailsOnceAndKeepsTheOldRecord() throws {
      let store = InMemoryReaderStore(m2)
      store.failNextSave()
      let error = #expect(throws: ReaderError.self) { try store.saveLastReader(chipper) }
      #expect(error?.code == .storeUnavailable)
      #expect(store.savedReader == m2)
      try store.saveLastReader(chipper)
      #expect(try store.loadLastReader() == chipper)
    }

    @Test func failNextLoadThrowsTheGivenErrorOnce() throws {
      let store = InMemoryReaderStore(m2)
      let injected = ReaderError(.storeCorrupt, "bad bytes", context: ["offset": "3"])
      store.failNextLoad(with: injected)
      #expect(store.savedReader == m2)  // peeking does not consume the failure
      let error = #expect(throws: ReaderError.self) { try store.loadLastReader() }
      #expect(error == injected)
      #expect(try store.loadLastReader() == m2)
    }

    @Test func failNextClearFailsOnceAndKeepsTheRecord() throws {
      let store = InMemoryReaderStore(m2)
      store.failNextClear()
      #expect(throws: ReaderError.self) { try store.clearLastReader() }
      #expect(try store.loadLastReader() == m2)
      try store.clearLastReader()
      #expect(try store.loadLastReader() == nil)
    }

    @Test func failuresAreIndependentPerOperation() throws {
      let store = InMemoryReaderStore(m2)
      store.failNextSave()
      #expect(try store.loadLastReader() == m2)
      try store.clearLastReader()
      #expect(throws: ReaderError.self) { try store.saveLastReader(chipper) }
      #expect(try store.loadLastReader() == nil)
    }
  }
}
