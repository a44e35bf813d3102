import Foundation
import NFCKit

/// Runs `readerctl ndef <subcommand> …`; `arguments` excludes "readerctl" and "ndef".
/// Writes to the given sinks and returns the process exit status (0, 64 usage, 65 data error, 66 no input).
///
/// - `ndef decode [--hex] FILE|-` prints the message as one line of JSON (``NDEFJSON``); `-` reads stdin;
///   `--hex` reads hex text (whitespace allowed) instead of raw bytes. Malformed input prints
///   `readerctl: malformed NDEF at byte N: expected …` on stderr and exits 65 with nothing on stdout.
/// - `ndef encode [--hex] (--text TEXT [--lang CODE] | --uri URI | --mime TYPE FILE)…` builds a message with
///   one record per flag, in order, and writes its bytes raw (through `stdoutBytes`) or as hex.
///
/// Strings given to `stdout` and `stderr` are complete lines, ending in `"\n"`.
func runNDEFCommand(
  _ arguments: [String], stdin: () -> [UInt8], stdout: (String) -> Void, stdoutBytes: ([UInt8]) -> Void,
  stderr: (String) -> Void
) -> Int32 {
  do throws(NDEFCommandFailure) {
    guard let subcommand = arguments.first else { throw .usage(nil) }
    let rest = Array(arguments.dropFirst())
    switch subcommand {
    case "decode": stdout(try NDEFCommand.decode(rest, stdin: stdin))
    case "encode":
      switch try NDEFCommand.encode(rest) {
      case .text(let text): stdout(text)
      case .bytes(let bytes): stdoutBytes(bytes)
      }
    case "help", "--help", "-h": stdout(ndefUsage)
    default: throw .usage("unknown subcommand '\(subcommand)'")
    }
    return NDEFCommandFailure.success
  } catch {
    stderr(error.report)
    return error.status
  }
}

private let ndefUsage = """
  usage: readerctl ndef decode [--hex] FILE|-
         readerctl ndef encode [--hex] (--text TEXT [--lang CODE] | --uri URI | --mime TYPE FILE)...

    decode   print the NDEF message in FILE (- for stdin) as one line of JSON
    encode   build a message with one record per --text, --uri or --mime, in order, and write its bytes
    --hex    decode: read hex text (whitespace allowed); encode: write hex instead of raw bytes
    --lang   language code of the preceding --text (default en)

  exit status: 0 ok, 64 usage, 65 malformed input, 66 input not found

  """

/// Why the command stopped, and the exit status for it (the one place statuses are chosen).
private enum NDEFCommandFailure: Error {
  /// Bad flags or arguments (64); the optional message comes before the usage text.
  case usage(String?)
  /// An argument value that cannot be used (64), reported without the usage text.
  case invalidArgument(String)
  /// Malformed input data (65).
  case data(String)
  /// An input file that cannot be read (66).
  case noInput(String)

  static let success: Int32 = 0

  var status: Int32 {
    switch self {
    case .usage, .invalidArgument: 64
    case .data: 65
    case .noInput: 66
    }
  }

  /// What to print on stderr.
  var report: String {
    switch self {
    case .usage(let message): (message.map { "readerctl: \($0)\n" } ?? "") + ndefUsage
    case .invalidArgument(let message), .data(let message), .noInput(let message): "readerctl: \(message)\n"
    }
  }
}

/// The subcommands, as functions from arguments to output.
private enum NDEFCommand {
  enum Output {
    case text(String)
    case bytes([UInt8])
  }

  // MARK: decode

  static func decode(_ arguments: [String], stdin: () -> [UInt8]) throws(NDEFCommandFailure) -> String {
    var hexInput = false
    var inputs: [String] = []
    for argument in arguments {
      if argument == "--hex" {
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
    var bytes = input == "-" ? stdin() : try readFile(input)
    if hexInput {
      guard let parsed = NDEFBytes(hex: String(decoding: bytes, as: UTF8.self)) else {
        throw .data("input is not hex: expected two hex digits per byte, with whitespace only between bytes")
      }
      bytes = parsed.array
    }
    do {
      return NDEFJSON.render(try NDEFDecoder().decode(bytes)) + "\n"
    } catch {
      throw .data(
        "malformed NDEF at byte \(error.offset): expected \(error.expected) (\(error.code): \(error.message))")
    }
  }

  // MARK: encode

  private enum RecordSpec {
    case text(String, language: String)
    case uri(String)
    case mime(type: String, file: String)
  }

  static func encode(_ arguments: [String]) throws(NDEFCommandFailure) -> Output {
    var hexOutput = false
    var specs: [RecordSpec] = []
    var index = 0
    func value(_ count: Int = 1) throws(NDEFCommandFailure) -> [String] {
      guard index + count < arguments.count else {
        throw .usage("\(arguments[index]) needs \(count == 1 ? "a value" : "\(count) values")")
      }
      defer { index += count }
      return Array(arguments[(index + 1)...(index + count)])
    }
    while index < arguments.count {
      let argument = arguments[index]
      switch argument {
      case "--hex": hexOutput = true
      case "--text": specs.append(.text(try value()[0], language: "en"))
      case "--lang":
        let language = try value()[0]
        guard case .text(let text, _) = specs.last else { throw .usage("--lang must follow a --text") }
        specs[specs.count - 1] = .text(text, language: language)
      case "--uri": specs.append(.uri(try value()[0]))
      case "--mime":
        let values = try value(2)
        specs.append(.mime(type: values[0], file: values[1]))
      default: throw .usage("unknown argument '\(argument)' for encode")
      }
      index += 1
    }
    guard !specs.isEmpty else { throw .usage("encode needs at least one --text, --uri or --mime") }

    var records: [NDEFRecord] = []
    for spec in specs {
      do {
        switch spec {
        case .text(let text, let language): records.append(try .text(text, languageCode: language))
        case .uri(let uri): records.append(try .uri(uri))
        case .mime(let type, let file): records.append(try .media(type: type, payload: NDEFBytes(try readFile(file))))
        }
      } catch let error as NDEFError {
        throw .invalidArgument("\(error.message); expected \(error.expected)")
      } catch let error as NDEFCommandFailure {
        throw error
      } catch {
        throw .invalidArgument("\(error)")
      }
    }
    let bytes: [UInt8]
    do {
      bytes = try NDEFMessage(records: records).encoded()
    } catch {
      throw .invalidArgument(error.message)
    }
    return hexOutput ? .text(NDEFBytes(bytes).hex + "\n") : .bytes(bytes)
  }

  // MARK: Files

  private static func readFile(_ path: String) throws(NDEFCommandFailure) -> [UInt8] {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw .noInput("cannot read \(path): no such file")
    }
    guard !isDirectory.boolValue else { throw .noInput("cannot read \(path): is a directory") }
    guard let data = FileManager.default.contents(atPath: path) else {
      throw .noInput("cannot read \(path): permission denied or unreadable")
    }
    return Array(data)
  }
}
