import Foundation

/// How this host's NFC system runs reader sessions on PC/SC readers: the system's rules, set by whoever
/// administers the machine in a configuration file, never by an app.
///
/// The file is the first of these that exists:
/// 1. the path in the environment variable `READERKIT_NFC_CONFIG`,
/// 2. `$XDG_CONFIG_HOME/readerkit/nfc.conf` (`~/.config/readerkit/nfc.conf` when unset),
/// 3. `/etc/readerkit/nfc.conf`.
///
/// Without one, the defaults apply. Lines are `key = value`; `#` starts a comment. The keys:
///
/// | key | value | default |
/// |---|---|---|
/// | `session-timeout` | seconds a session may last from `begin()`, or `none` | 60 (Core NFC's limit) |
/// | `when-busy` | `queue` (a second session waits, FIFO, across processes too) or `refuse` (it ends with 203) | `queue` |
/// | `reader` | poll only readers whose PC/SC name contains this text | every reader |
/// | `command-timeout` | seconds a tag may take to answer one command | 2 |
/// | `busy-timeout` | seconds a tag may stay held by another program before the session ends with 203 | 2 |
/// | `lock-directory` | where processes queue for the one reader session (shared by every user who reads tags) | `$XDG_RUNTIME_DIR/readerkit`, else `/tmp/readerkit-<uid>` |
///
/// ```
/// # /etc/readerkit/nfc.conf
/// session-timeout = 120
/// when-busy = refuse
/// reader = ACS ACR122U
/// ```
public struct NFCSystemConfiguration: Sendable, Hashable {
  /// The time limit of a session, counted from `begin()`; `nil` for none.
  public var sessionTimeout: Duration? = .seconds(60)
  /// What a session begun while another runs (in this process or another) gets.
  public var whenBusy = NFCSystemPolicy.BusyBehavior.queue
  /// Only readers whose name contains this text are polled; `nil` for every reader.
  public var reader: String?
  /// How long a tag may take to answer one command before it counts as gone.
  public var commandTimeout = Duration.seconds(2)
  /// How long a tag may stay held exclusively by another program before the session ends with
  /// `readerSessionInvalidationErrorSystemIsBusy`.
  public var busyTimeout = Duration.seconds(2)
  /// The directory of the cross-process session line.
  public var lockDirectory: String
  /// The file the configuration came from; `nil` for the defaults.
  public var source: String?

  /// The defaults, with the lock directory taken from `environment`.
  public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
    if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
      lockDirectory = runtime + "/readerkit"
    } else {
      lockDirectory = "/tmp/readerkit-\(getuid())"
    }
  }

  /// The system's policy for sessions: its time limit and what a second session gets.
  public var policy: NFCSystemPolicy { NFCSystemPolicy(sessionTimeout: sessionTimeout, whenBusy: whenBusy) }

  /// A line of a configuration file that could not be used.
  public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// The line, from 1 (0 when the file as a whole could not be read).
    public var line: Int
    /// What is wrong.
    public var message: String

    public var description: String { line > 0 ? "\(path) line \(line): \(message)" : "\(path): \(message)" }
  }

  /// The largest configuration file read.
  static let maximumSize = 64 * 1024

  /// The files looked for, in order, under `environment`.
  public static func searchPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
    var paths: [String] = []
    if let explicit = environment["READERKIT_NFC_CONFIG"], !explicit.isEmpty { paths.append(explicit) }
    if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
      paths.append(config + "/readerkit/nfc.conf")
    } else if let home = environment["HOME"], home.hasPrefix("/") {
      paths.append(home + "/.config/readerkit/nfc.conf")
    }
    paths.append("/etc/readerkit/nfc.conf")
    return paths
  }

  /// The configuration of this host: the first file of `searchPath` that exists, or the defaults.
  /// - Throws: `Error` naming the file and line of the first problem: an unknown key, a value out of
  ///   range, a file that cannot be read or is larger than 64 KiB.
  public static func load(
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) throws(Error) -> NFCSystemConfiguration {
    for path in searchPath(environment: environment) where FileManager.default.fileExists(atPath: path) {
      guard let handle = FileHandle(forReadingAtPath: path) else {
        throw Error(path: path, line: 0, message: "the file cannot be read")
      }
      defer { try? handle.close() }
      let data = (try? handle.read(upToCount: maximumSize + 1)) ?? Data()
      guard data.count <= maximumSize else {
        throw Error(path: path, line: 0, message: "the file is larger than \(maximumSize) bytes")
      }
      return try parse(String(decoding: data, as: UTF8.self), path: path, environment: environment)
    }
    return NFCSystemConfiguration(environment: environment)
  }

  /// The configuration written in `text` (the contents of the file at `path`).
  public static func parse(
    _ text: String, path: String, environment: [String: String] = ProcessInfo.processInfo.environment
  ) throws(Error) -> NFCSystemConfiguration {
    var configuration = NFCSystemConfiguration(environment: environment)
    configuration.source = path
    for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
      let trimmed = line.trimmingCharacters(in: .whitespaces)
      guard !trimmed.isEmpty else { continue }
      func fail(_ message: String) -> Error { Error(path: path, line: index + 1, message: message) }
      guard let equals = trimmed.firstIndex(of: "=") else { throw fail("expected `key = value`, found `\(trimmed)`") }
      let key = trimmed[..<equals].trimmingCharacters(in: .whitespaces)
      let value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
      func seconds(allowNone: Bool) throws(Error) -> Duration? {
        if allowNone && value == "none" { return nil }
        guard let number = Double(value), number > 0, number <= 86_400, let duration = Duration.seconds(exactly: number)
        else {
          throw fail("\(key) is `\(value)`; it takes seconds between 0 and 86400\(allowNone ? ", or none" : "")")
        }
        return duration
      }
      switch key {
      case "session-timeout":
        configuration.sessionTimeout = try seconds(allowNone: true)
      case "when-busy":
        guard let behavior = NFCSystemPolicy.BusyBehavior(rawValue: value) else {
          throw fail("when-busy is `\(value)`; it takes queue or refuse")
        }
        configuration.whenBusy = behavior
      case "reader":
        configuration.reader = value.isEmpty ? nil : value
      case "command-timeout":
        configuration.commandTimeout = try seconds(allowNone: false) ?? configuration.commandTimeout
      case "busy-timeout":
        configuration.busyTimeout = try seconds(allowNone: false) ?? configuration.busyTimeout
      case "lock-directory":
        guard value.hasPrefix("/") else { throw fail("lock-directory is `\(value)`; it takes an absolute path") }
        configuration.lockDirectory = value
      default:
        throw fail("unknown key `\(key)`")
      }
    }
    return configuration
  }
}
