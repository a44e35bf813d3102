import Foundation
import NFCKit

/// Runs `readerctl ndef <subcommand> …`; `arguments` excludes "readerctl" and "ndef".
/// Writes to the given sinks and returns the process exit status (0, 64 usage, 65 data error, 66 no input).
///
/// - `ndef decode [--hex] FILE|-` prints the message as one line of JSON (``NDEFJSON``); `-` reads stdin;
///   `--hex` reads hex text (whitespace allowed between bytes) instead of raw bytes. Malformed input prints
///   one line on stderr, `readerctl: malformed NDEF at byte N: expected …` (or `readerctl: input is not hex
///   at byte N: …`), and exits 65 with nothing on stdout.
/// - `ndef encode [--hex] [--output FILE] (--text TEXT [--lang CODE] | --uri URI | --mime TYPE FILE)…` builds
///   a message with one record per flag, in order, and writes its bytes raw (through `stdoutBytes`, or to FILE)
///   or as hex. It refuses (65) a message that `ndef decode` would refuse — larger than `inputLimit` bytes (with
///   `--hex`, hex text larger than that), or one the decoder rejects — with decode's words, and refuses (64) to
///   write raw bytes to a terminal (`stdoutIsTerminal`) unless `--hex` or `--output` is given.
///
/// Input larger than `inputLimit` bytes is a data error (65): `stdin` returns `nil` when standard input holds
/// more than that, and a file's size is checked before it is read. `--` ends the options.
///
/// Strings given to `stdout` and `stderr` are complete lines, ending in `"\n"`.
func runNDEFCommand(
  _ arguments: [String], inputLimit: Int = ReaderCtl.maximumInputSize, stdin: () -> [UInt8]?,
  stdout: (String) -> Void, stdoutBytes: ([UInt8]) -> Void, stderr: (String) -> Void, stdoutIsTerminal: Bool = false
) -> Int32 {
  do throws(NDEFCommandFailure) {
    guard let subcommand = arguments.first else { throw .usage(nil) }
    let rest = Array(arguments.dropFirst())
    let command = NDEFCommand(inputLimit: inputLimit)
    switch subcommand {
    case "decode": stdout(try command.decode(rest, stdin: stdin))
    case "encode":
      let (output, file) = try command.encode(rest, stdoutIsTerminal: stdoutIsTerminal)
      switch (output, file) {
      case (.text(let text), nil): stdout(text)
      case (.bytes(let bytes), nil): stdoutBytes(bytes)
      case (.text(let text), let file?): try NDEFCommand.write(Array(text.utf8), to: file)
      case (.bytes(let bytes), let file?): try NDEFCommand.write(bytes, to: file)
      }
    case "help", "--help", "-h": stdout(ndefUsage)
    default: throw .usage("unknown subcommand '\(subcommand)'")
    }
    return ExitStatus.success
  } catch {
    stderr(error.report)
    return error.status
  }
}

/// The usage text of `readerctl ndef`, printed by `readerctl ndef help` and `--help`, and after usage errors.
let ndefUsage = """
  usage: readerctl ndef decode [--hex] [--] FILE|-
         readerctl ndef encode [--hex] [--output FILE] (--text TEXT [--lang CODE] | --uri URI | --mime TYPE FILE)...

    decode    print the NDEF message in FILE (- for stdin) as one line of JSON
    encode    build a message with one record per --text, --uri or --mime, in order, and write its bytes
    --hex     decode: read hex text (whitespace allowed between bytes); encode: write hex instead of raw bytes
    --lang    language code of the preceding --text (default en)
    --output  encode: write to FILE instead of standard output (- for standard output)
    --        decode: what follows is the FILE, even if it starts with -

  Inputs (FILE, stdin, --mime files) are limited to 16 MiB. Error offsets count bytes of the NDEF message
  (with --hex, of the decoded bytes). encode refuses a message that decode would refuse (over 16 MiB, or
  over 16 MiB of hex text with --hex), and refuses to write raw bytes to a terminal: add --hex or --output.

  exit status: 0 ok, 64 usage, 65 malformed or oversized input or output, 66 input not found, 74 output not
  writable

  """

/// Why the command stopped, and the exit status for it (the one place statuses are chosen).
enum NDEFCommandFailure: Error {
  /// Bad flags or arguments (64); the optional message comes before the usage text.
  case usage(String?)
  /// An argument value that cannot be used (64), reported without the usage text.
  case invalidArgument(String)
  /// Malformed or oversized input data (65).
  case data(String)
  /// An input file that cannot be read (66).
  case noInput(String)
  /// An output file that cannot be written (74).
  case output(String)

  var status: Int32 {
    switch self {
    case .usage, .invalidArgument: ExitStatus.usage
    case .data: ExitStatus.dataError
    case .noInput: ExitStatus.noInput
    case .output: ExitStatus.ioError
    }
  }

  /// What to print on stderr: one line, except that usage errors are followed by the usage text.
  var report: String {
    switch self {
    case .usage(let message): (message.map { "readerctl: \(Self.oneLine($0))\n" } ?? "") + ndefUsage
    case .invalidArgument(let message), .data(let message), .noInput(let message), .output(let message):
      "readerctl: \(Self.oneLine(message))\n"
    }
  }

  /// `text` with control characters escaped, so that a file name or argument holding a newline cannot
  /// split the report.
  private static func oneLine(_ text: String) -> String {
    var line = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\n": line += "\\n"
      case "\r": line += "\\r"
      case "\t": line += "\\t"
      case "\u{00}"..."\u{1F}", "\u{7F}": line += "\\u{\(String(scalar.value, radix: 16))}"
      default: line.unicodeScalars.append(scalar)
      }
    }
    return line
  }
}

/// The subcommands, as functions from arguments to output; `nfc scan` and `nfc write` read tags and
/// build messages with the same functions.
struct NDEFCommand {
  enum Output {
    case text(String)
    case bytes([UInt8])
  }

  /// One record asked for by `--text TEXT [--lang CODE]`, `--uri URI` or `--mime TYPE FILE`.
  enum RecordSpec {
    case text(String, language: String)
    case uri(String)
    case mime(type: String, file: String)
  }

  /// The largest input read from stdin or a file.
  let inputLimit: Int

  // MARK: decode

  func decode(_ arguments: [String], stdin: () -> [UInt8]?) throws(NDEFCommandFailure) -> String {
    var hexInput = false
    var inputs: [String] = []
    for (index, argument) in arguments.enumerated() {
      if argument == "--" {
        inputs += arguments[(index + 1)...]
        break
      } else if argument == "--help" || argument == "-h" {
        return ndefUsage
      } else if argument == "--hex" {
        hexInput = true
      } else if argument.hasPrefix("-") && argument != "-" {
        throw .usage("unknown option '\(argument)' for decode")
      } else {
        inputs.append(argument)
      }
    }
    guard inputs.count == 1, let input = inputs.first else {
      throw .usage(inputs.isEmpty ? "decode needs a FILE (or - for stdin)" : "decode takes one FILE")
    }
    var bytes: [UInt8]
    if input == "-" {
      guard let read = stdin() else { throw .data("standard input is larger than \(limitDescription)") }
      bytes = read
    } else {
      bytes = try readFile(input)
    }
    if hexInput { bytes = try Self.parseHex(bytes) }
    return NDEFJSON.render(try Self.decodeMessage(bytes)) + "\n"
  }

  /// The message in `bytes`, as `decode` reads it (`encode` checks its own output with it).
  private static func decodeMessage(_ bytes: [UInt8]) throws(NDEFCommandFailure) -> NDEFMessage {
    do {
      return try NDEFDecoder().decode(bytes)
    } catch {
      throw .data(malformed(error))
    }
  }

  /// How `decode` reports a malformed message: `malformed NDEF at byte N: expected … (code: message)`.
  static func malformed(_ error: NDEFError) -> String {
    "malformed NDEF at byte \(error.offset): expected \(error.expected) (\(error.code): \(error.message))"
  }

  /// The report of an input, or of an output meant to be read back, over `inputLimit`.
  private func tooLarge(_ what: String, size: Int) -> NDEFCommandFailure {
    .data("\(what) is larger than \(limitDescription): \(size) bytes")
  }

  /// Hex text to bytes: two digits per byte, either case, whitespace only between bytes.
  ///
  /// - Throws: a data error naming the offset (in the text) of the first character that breaks the rule.
  static func parseHex(_ text: [UInt8]) throws(NDEFCommandFailure) -> [UInt8] {
    do {
      return try NDEFBytes(hexText: text).array
    } catch {
      let expected = error.expectedSecondDigit ? "the second hex digit of a byte" : "a hex digit or whitespace"
      let found =
        switch error.found {
        case nil: "the end"
        case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): "whitespace"
        case let byte? where (0x21...0x7E).contains(byte): "'\(UnicodeScalar(byte))'"
        case let byte?: "byte 0x\(hex(byte))"
        }
      throw .data("input is not hex at byte \(error.offset): expected \(expected), found \(found)")
    }
  }

  private static func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16)
    return digits.count == 1 ? "0" + digits : digits
  }

  // MARK: encode

  func encode(_ arguments: [String], stdoutIsTerminal: Bool) throws(NDEFCommandFailure) -> (Output, file: String?) {
    var hexOutput = false
    var outputFile: String?
    var specs: [RecordSpec] = []
    var index = 0
    while index < arguments.count {
      if try Self.takeRecordFlag(arguments, at: &index, into: &specs) { continue }
      let argument = arguments[index]
      switch argument {
      case "--help", "-h": return (.text(ndefUsage), nil)
      case "--hex": hexOutput = true
      case "--output":
        guard index + 1 < arguments.count else { throw .usage("--output needs a value") }
        index += 1
        let file = arguments[index]
        guard !file.isEmpty else { throw .usage("--output needs a file name") }
        outputFile = file == "-" ? nil : file
      case "--":
        if index + 1 < arguments.count { throw .usage("unexpected argument '\(arguments[index + 1])' for encode") }
      default: throw .usage("unknown argument '\(argument)' for encode")
      }
      index += 1
    }
    guard !specs.isEmpty else { throw .usage("encode needs at least one --text, --uri or --mime") }
    if stdoutIsTerminal, !hexOutput, outputFile == nil {
      throw .invalidArgument(
        "refusing to write binary NDEF to a terminal: add --hex, give --output FILE, or redirect standard output")
    }
    let bytes = try message(specs)
    try refuseWhatDecodeWould(bytes, hexOutput: hexOutput)
    return (hexOutput ? .text(NDEFBytes(bytes).hex + "\n") : .bytes(bytes), outputFile)
  }

  /// Takes the record flag at `arguments[index]` (`--text`, `--lang`, `--uri`, `--mime`) and its values
  /// into `specs`, and moves `index` past them; returns false, moving nothing, for any other argument.
  /// A flag's value is taken as it is, even when it starts with `-`.
  static func takeRecordFlag(_ arguments: [String], at index: inout Int, into specs: inout [RecordSpec])
    throws(NDEFCommandFailure) -> Bool
  {
    let flag = arguments[index]
    func values(_ count: Int) throws(NDEFCommandFailure) -> [String] {
      guard index + count < arguments.count else {
        throw .usage("\(flag) needs \(count == 1 ? "a value" : "\(count) values")")
      }
      return Array(arguments[(index + 1)...(index + count)])
    }
    let taken: Int
    switch flag {
    case "--text":
      specs.append(.text(try values(1)[0], language: "en"))
      taken = 1
    case "--lang":
      let language = try values(1)[0]
      guard case .text(let text, _) = specs.last else { throw .usage("--lang must follow a --text") }
      specs[specs.count - 1] = .text(text, language: language)
      taken = 1
    case "--uri":
      specs.append(.uri(try values(1)[0]))
      taken = 1
    case "--mime":
      let pair = try values(2)
      specs.append(.mime(type: pair[0], file: pair[1]))
      taken = 2
    default:
      return false
    }
    index += taken + 1
    return true
  }

  /// The bytes of the message `specs` describe, one record per spec in order, as `encode` writes them;
  /// `--mime` files are read here (each at most `inputLimit` bytes).
  func message(_ specs: [RecordSpec]) throws(NDEFCommandFailure) -> [UInt8] {
    var records: [NDEFRecord] = []
    for spec in specs {
      var payload: [UInt8] = []
      if case .mime(_, let file) = spec { payload = try readFile(file) }
      do throws(NDEFError) {
        switch spec {
        case .text(let text, let language): records.append(try .text(text, languageCode: language))
        case .uri(let uri): records.append(try .uri(uri))
        case .mime(let type, _): records.append(try .media(type: type, payload: NDEFBytes(payload)))
        }
      } catch {
        throw .invalidArgument("\(error.message); expected \(error.expected)")
      }
    }
    do {
      return try NDEFMessage(records: records).encoded()
    } catch {
      throw .invalidArgument(error.message)
    }
  }

  /// Refuses, with decode's words, an encoded message that `decode` would refuse: over `inputLimit`
  /// bytes (with `hexOutput`, hex text over it), or one the decoder rejects.
  func refuseWhatDecodeWould(_ bytes: [UInt8], hexOutput: Bool) throws(NDEFCommandFailure) {
    if hexOutput {
      let size = bytes.count * 2 + 1
      if size > inputLimit { throw tooLarge("the hex text of the encoded message", size: size) }
    } else if bytes.count > inputLimit {
      throw tooLarge("the encoded message", size: bytes.count)
    }
    _ = try Self.decodeMessage(bytes)
  }

  /// Writes `bytes` to the file at `path`, replacing it.
  static func write(_ bytes: [UInt8], to path: String) throws(NDEFCommandFailure) {
    do {
      try Data(bytes).write(to: URL(fileURLWithPath: path))
    } catch {
      throw .output("cannot write \(path): \((error as NSError).localizedFailureReason ?? error.localizedDescription)")
    }
  }

  // MARK: Files

  /// `inputLimit` as people read it.
  private var limitDescription: String {
    inputLimit % (1024 * 1024) == 0
      ? "\(inputLimit / (1024 * 1024)) MiB (\(inputLimit) bytes)" : "\(inputLimit) bytes"
  }

  /// The bytes of the file at `path`, at most `inputLimit` of them.
  ///
  /// A regular file's size is checked before anything is read; other files (a pipe, a device) are read
  /// up to one byte past the limit, so an endless one cannot exhaust memory.
  func readFile(_ path: String) throws(NDEFCommandFailure) -> [UInt8] {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw .noInput("cannot read \(path): no such file")
    }
    guard !isDirectory.boolValue else { throw .noInput("cannot read \(path): is a directory") }
    let attributes = try? FileManager.default.attributesOfItem(atPath: path)
    if attributes?[.type] as? FileAttributeType == .typeRegular, let size = attributes?[.size] as? Int,
      size > inputLimit
    {
      throw tooLarge(path, size: size)
    }
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw .noInput("cannot read \(path): permission denied or unreadable")
    }
    defer { try? handle.close() }
    var bytes: [UInt8] = []
    do {
      while let chunk = try handle.read(upToCount: 64 * 1024), !chunk.isEmpty {
        bytes += chunk
        guard bytes.count <= inputLimit else {
          throw NDEFCommandFailure.data("\(path) is larger than \(limitDescription)")
        }
      }
    } catch let failure as NDEFCommandFailure {
      throw failure
    } catch {
      throw .noInput("cannot read \(path): \(error.localizedDescription)")
    }
    return bytes
  }
}
