import Foundation
import NFCKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Runs `readerctl ndef <subcommand> …`; `arguments` excludes "readerctl" and "ndef".
/// Writes to the given sinks and returns the process exit status (0, 64 usage, 65 data error, 66 no
/// input, 74 output not writable). `--help` and `--version` are answered before this runs (`ReaderCtl`).
///
/// - `ndef decode [--hex] FILE|-` prints the message as one line of JSON (``NDEFJSON``); `-` reads stdin;
///   `--hex` reads hex text (whitespace allowed between bytes) instead of raw bytes. Malformed input prints
///   one line on stderr, `readerctl: malformed NDEF at byte N: expected …` (or `readerctl: input is not hex
///   at byte N: …`), and exits 65 with nothing on stdout.
/// - `ndef encode [--hex] [--output FILE] RECORD…` builds a message with one record per record option
///   (`RecordOptions`), in order, and writes its bytes raw (through `stdoutBytes`, or to FILE) or as hex. It
///   refuses (65) a message that `ndef decode` would refuse — larger than `inputLimit` bytes (with `--hex`,
///   hex text larger than that), or one the decoder rejects — with decode's words, and refuses (64) to write
///   raw bytes to a terminal (`stdoutIsTerminal`) unless `--hex` or `--output` is given.
///
/// Input larger than `inputLimit` bytes is a data error (65): a file's size is checked before it is read.
/// A usage error is one line, then the line pointing to the subcommand's help. `--` ends the options.
///
/// Strings given to `stdout` and `stderr` are complete lines, ending in `"\n"`.
func runNDEFCommand(
  _ arguments: [String], inputLimit: Int = ReaderCtl.maximumInputSize, stdin: () -> StandardStreams.Input,
  stdout: (String) -> Void, stdoutBytes: ([UInt8]) -> Void, stderr: (String) -> Void, stdoutIsTerminal: Bool = false
) -> Int32 {
  var help = NDEFCommand.help
  do throws(NDEFCommandFailure) {
    guard let subcommand = arguments.first else { throw .usage("ndef needs a subcommand: decode or encode") }
    let rest = Array(arguments.dropFirst())
    let command = NDEFCommand(inputLimit: inputLimit)
    switch subcommand {
    case "decode":
      help = NDEFCommand.decodeHelp
      stdout(try command.decode(rest, stdin: stdin))
    case "encode":
      help = NDEFCommand.encodeHelp
      let (output, file) = try command.encode(rest, stdoutIsTerminal: stdoutIsTerminal)
      switch (output, file) {
      case (.text(let text), nil): stdout(text)
      case (.bytes(let bytes), nil): stdoutBytes(bytes)
      case (.text(let text), let file?): try NDEFCommand.write(Array(text.utf8), to: file)
      case (.bytes(let bytes), let file?): try NDEFCommand.write(bytes, to: file)
      }
    case "help": stdout(NDEFCommand.help.text)
    default: throw .usage("unknown subcommand '\(subcommand)' for ndef")
    }
    return ExitStatus.success
  } catch {
    stderr(error.report + (error.status == ExitStatus.usage && error.isUsage ? help.seeHelp + "\n" : ""))
    return error.status
  }
}

/// Why the command stopped, and the exit status for it (the one place statuses are chosen).
enum NDEFCommandFailure: Error {
  /// Bad flags or arguments (64), followed by the line pointing to the help.
  case usage(String)
  /// An argument value that cannot be used (64), reported alone.
  case invalidArgument(String)
  /// Malformed or oversized input data (65).
  case data(String)
  /// An input file that cannot be read (66).
  case noInput(String)
  /// An output file that cannot be written, or an input that failed mid-read (74).
  case output(String)

  var status: Int32 {
    switch self {
    case .usage, .invalidArgument: ExitStatus.usage
    case .data: ExitStatus.dataError
    case .noInput: ExitStatus.noInput
    case .output: ExitStatus.ioError
    }
  }

  /// Whether this is bad usage, to be followed by the line pointing to the help.
  var isUsage: Bool {
    if case .usage = self { return true }
    return false
  }

  /// What to print on stderr: one line.
  var report: String {
    switch self {
    case .usage(let message), .invalidArgument(let message), .data(let message), .noInput(let message),
      .output(let message):
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

  /// One record asked for by the record options (`RecordOptions`).
  enum RecordSpec: Equatable {
    case text(String, language: String)
    case uri(String)
    case mime(type: String, file: String)
    case smartPoster(SmartPosterSpec)
  }

  /// A Smart Poster asked for by `--poster URI` and the options after it.
  struct SmartPosterSpec: Equatable {
    /// A title and its language code.
    struct Title: Equatable {
      var text: String
      var language: String
    }

    var uri: String
    var titles: [Title] = []
    var action: SmartPosterRecord.Action?
    var size: UInt32?
    var resourceType: String?
  }

  static let help = CommandHelp(
    command: "ndef",
    overview: "Decodes and encodes NFC Forum NDEF messages.",
    synopses: ["decode [--hex] [--] FILE|-", "encode [--hex] [--output FILE] RECORD..."],
    subcommands: [
      ("decode", "print the NDEF message in FILE (- for standard input) as one line of JSON"),
      ("encode", "build a message with one record per record option, in order, and write its bytes"),
    ],
    notes: ["Run 'readerctl ndef decode --help' or 'readerctl ndef encode --help' for their options."],
    exitStatuses: exitStatuses)

  static let decodeHelp = CommandHelp(
    command: "ndef decode",
    overview: "Prints the NDEF message in FILE, or on standard input, as one line of JSON.",
    synopses: ["[--hex] [--] FILE|-"],
    arguments: [("FILE|-", "the message's file, or - for standard input; after --, even a name starting with -")],
    options: [.init("hex", [], "read hex text (whitespace allowed between bytes) instead of raw bytes")],
    notes: [
      "The input is at most 16 MiB. Error offsets count bytes of the NDEF message (with --hex, of the decoded "
        + "bytes)."
    ],
    exitStatuses: exitStatuses)

  static let encodeHelp = CommandHelp(
    command: "ndef encode",
    overview: "Builds an NDEF message with one record per record option, in order, and writes its bytes.",
    synopses: ["[--hex] [--output FILE] RECORD..."],
    discussion: [
      "RECORD is --text TEXT [--lang CODE], --uri URI, --mime TYPE FILE, or a Smart Poster: --poster URI "
        + "followed by its --title TEXT [--lang CODE], --action, --resource-size and --resource-type."
    ],
    options: [
      .init("hex", [], "write hex text instead of raw bytes"),
      .init("output", ["FILE"], "write to FILE instead of standard output (- for standard output)"),
    ] + RecordOptions.options,
    notes: [
      "--mime files are at most 16 MiB. encode refuses a message that decode would refuse (over 16 MiB, or over "
        + "16 MiB of hex text with --hex), and refuses to write raw bytes to a terminal: add --hex or --output."
    ],
    exitStatuses: exitStatuses)

  private static let exitStatuses: [(Int32, String)] = [
    (0, "ok"), (64, "usage"), (65, "malformed or oversized input or output"), (66, "input not found or unreadable"),
    (74, "the output cannot be written, or the input cannot be read to its end"),
  ]

  /// The largest input read from stdin or a file.
  let inputLimit: Int

  // MARK: decode

  func decode(_ arguments: [String], stdin: () -> StandardStreams.Input) throws(NDEFCommandFailure) -> String {
    let options = try Self.parse(arguments, Self.decodeHelp)
    let inputs = options.positionals
    guard inputs.count == 1, let input = inputs.first else {
      throw .usage(inputs.isEmpty ? "decode needs a FILE (or - for stdin)" : "decode takes one FILE")
    }
    var bytes: [UInt8]
    if input == "-" {
      switch stdin() {
      case .bytes(let read): bytes = read
      case .tooLarge: throw .data("standard input is larger than \(limitDescription)")
      case .failed(let code): throw .output("cannot read standard input: \(Self.reason(code))")
      }
    } else {
      bytes = try readFile(input)
    }
    if options.has("hex") { bytes = try Self.parseHex(bytes) }
    return NDEFJSON.render(try Self.decodeTyped(bytes)) + "\n"
  }

  /// `arguments` parsed against `help`'s options, a usage error as this command reports it.
  private static func parse(_ arguments: [String], _ help: CommandHelp) throws(NDEFCommandFailure) -> ArgumentList {
    do throws(UsageError) {
      return try help.parse(arguments)
    } catch {
      throw .usage(error.message)
    }
  }

  /// The message in `bytes`, as `decode` reads it (`encode` checks its own output with it).
  private static func decodeMessage(_ bytes: [UInt8]) throws(NDEFCommandFailure) -> NDEFMessage {
    do {
      return try NDEFDecoder().decode(bytes)
    } catch {
      throw .data(malformed(error))
    }
  }

  /// The message in `bytes` with the typed views of its records, as `decode` reads it.
  private static func decodeTyped(_ bytes: [UInt8]) throws(NDEFCommandFailure) -> NDEFTypedMessage {
    do {
      return try NDEFDecoder().decodeTyped(bytes)
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
    let options = try Self.parse(arguments, Self.encodeHelp)
    if let extra = options.positionals.first { throw .usage("unexpected argument '\(extra)' for encode") }
    let hexOutput = options.has("hex")
    var outputFile: String?
    if let file = options.string("output") {
      guard !file.isEmpty else { throw .usage("--output needs a file name") }
      outputFile = file == "-" ? nil : file
    }
    let specs: [RecordSpec]
    do throws(UsageError) {
      specs = try RecordOptions.specs(options)
    } catch {
      throw .usage(error.message)
    }
    guard !specs.isEmpty else { throw .usage("encode needs at least one --text, --uri, --mime or --poster") }
    if stdoutIsTerminal, !hexOutput, outputFile == nil {
      throw .invalidArgument(
        "refusing to write binary NDEF to a terminal: add --hex, give --output FILE, or redirect standard output")
    }
    let bytes = try message(specs)
    try refuseWhatDecodeWould(bytes, hexOutput: hexOutput)
    return (hexOutput ? .text(NDEFBytes(bytes).hex + "\n") : .bytes(bytes), outputFile)
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
        case .smartPoster(let poster):
          let record = SmartPosterRecord(
            uri: URIRecord(uri: poster.uri),
            titles: poster.titles.map { TextRecord(text: $0.text, languageCode: $0.language) }, action: poster.action,
            size: poster.size,
            resourceType: poster.resourceType)
          records.append(try record.record())
        }
      } catch {
        throw .invalidArgument(Self.describe(error))
      }
    }
    do {
      return try NDEFMessage(records: records).encoded()
    } catch {
      throw .invalidArgument(error.message)
    }
  }

  /// What is wrong with a record option's value: the message, and what was expected when the message
  /// does not say it already.
  static func describe(_ error: NDEFError) -> String {
    var expected = Substring(error.expected)
    // "a media type such as text/plain: 1 to 255 printable US-ASCII bytes" after a message that already
    // says "is not a media type such as text/plain" adds only what follows the colon.
    if let colon = expected.range(of: ": "), error.message.contains(expected[..<colon.lowerBound]) {
      expected = expected[colon.upperBound...]
    }
    return error.message.contains(expected) ? error.message : "\(error.message); expected \(expected)"
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

  /// Writes `bytes` to the file at `path`, replacing what it held (created with mode 0666 less the
  /// umask, as a shell's `>` does), through `DescriptorWriter` as every write of the tool.
  static func write(_ bytes: [UInt8], to path: String) throws(NDEFCommandFailure) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
    guard descriptor >= 0 else { throw .output("cannot write \(path): \(reason(errno))") }
    if let code = DescriptorWriter.write(bytes, to: descriptor) {
      _ = close(descriptor)
      throw .output("cannot write \(path): \(reason(code))")
    }
    // A file system that reports a failed write only at close (NFS, a full quota) is heard here.
    guard close(descriptor) == 0 else { throw .output("cannot write \(path): \(reason(errno))") }
  }

  /// The system's words for `code`, in lower case as the rest of a report: `no space left on device`.
  static func reason(_ code: Int32) -> String {
    let text = String(cString: strerror(code))
    return text.prefix(1).lowercased() + text.dropFirst()
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
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
      let code = errno
      throw .noInput("cannot read \(path): \(code == ENOENT ? "no such file" : Self.reason(code))")
    }
    defer { _ = close(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { throw .noInput("cannot read \(path): \(Self.reason(errno))") }
    switch info.st_mode & S_IFMT {
    case S_IFDIR: throw .noInput("cannot read \(path): is a directory")
    case S_IFREG where Int(info.st_size) > inputLimit: throw tooLarge(path, size: Int(info.st_size))
    default: break
    }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count == 0 { return bytes }
      if count < 0 {
        if errno == EINTR { continue }
        throw .output("cannot read \(path): \(Self.reason(errno))")
      }
      bytes += chunk[..<count]
      guard bytes.count <= inputLimit else { throw .data("\(path) is larger than \(limitDescription)") }
    }
  }
}
