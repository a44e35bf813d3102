/// One D-Bus message: a method call, its return or error, or a signal, with its header fields and
/// body.
///
/// `encoded()` marshals it little-endian; `decode(_:)` reads one from untrusted bytes of either byte
/// order, checking the fixed header, the header fields each type requires, and that the body matches
/// its signature exactly. `frameLength(_:)` tells from the first 16 bytes how long the whole message
/// is, so a stream reader knows how much to wait for without trusting anything else.
public struct DBusMessage: Sendable, Hashable {
  /// The message type.
  public enum Kind: UInt8, Sendable, Hashable {
    /// A method call; a reply is expected unless `noReplyExpected` is set.
    case methodCall = 1
    /// A method's successful reply.
    case methodReturn = 2
    /// A method's error reply.
    case error = 3
    /// A signal.
    case signal = 4
  }

  /// The longest message the specification allows.
  public static let maximumLength = 128 * 1024 * 1024
  /// Flag: the caller wants no reply.
  public static let noReplyExpected: UInt8 = 0x1
  /// Flag: the bus must not start a service to receive the call.
  public static let noAutoStart: UInt8 = 0x2

  /// The message type.
  public var kind: Kind
  /// The header flags (`noReplyExpected`, `noAutoStart`).
  public var flags: UInt8
  /// The sender's serial; set by the connection when it sends the message.
  public var serial: UInt32
  /// The object (calls and signals).
  public var path: String?
  /// The interface (calls and signals).
  public var interface: String?
  /// The method or signal name.
  public var member: String?
  /// The error's name (errors), e.g. `org.bluez.Error.InProgress`.
  public var errorName: String?
  /// The serial of the call this answers (returns and errors).
  public var replySerial: UInt32?
  /// The connection the message is for.
  public var destination: String?
  /// The connection that sent it (set by the bus).
  public var sender: String?
  /// The body's values.
  public var body: [DBusValue]

  /// Creates a message.
  public init(
    kind: Kind, flags: UInt8 = 0, serial: UInt32 = 0, path: String? = nil, interface: String? = nil,
    member: String? = nil, errorName: String? = nil, replySerial: UInt32? = nil, destination: String? = nil,
    sender: String? = nil, body: [DBusValue] = []
  ) {
    self.kind = kind
    self.flags = flags
    self.serial = serial
    self.path = path
    self.interface = interface
    self.member = member
    self.errorName = errorName
    self.replySerial = replySerial
    self.destination = destination
    self.sender = sender
    self.body = body
  }

  /// A method call to `destination`'s object `path`.
  public static func methodCall(
    destination: String, path: String, interface: String, member: String, body: [DBusValue] = [], flags: UInt8 = 0
  ) -> DBusMessage {
    DBusMessage(
      kind: .methodCall, flags: flags, path: path, interface: interface, member: member, destination: destination,
      body: body)
  }

  /// The body's signature.
  public var signature: String { body.map(\.type.signature).joined() }

  /// The error's first string argument, which by convention explains it (empty for a non-error).
  public var errorMessage: String {
    guard kind == .error, case .string(let text)? = body.first else { return "" }
    return text
  }

  // MARK: Encoding

  /// The message's bytes, little-endian.
  public func encoded() -> [UInt8] {
    var bodyEncoder = DBusEncoder()
    for value in body { bodyEncoder.append(value) }
    var fields: [DBusValue] = []
    func field(_ code: UInt8, _ value: DBusValue?) {
      if let value { fields.append(.structure([.byte(code), .variant(value)])) }
    }
    field(1, path.map(DBusValue.objectPath))
    field(2, interface.map(DBusValue.string))
    field(3, member.map(DBusValue.string))
    field(4, errorName.map(DBusValue.string))
    field(5, replySerial.map(DBusValue.uint32))
    field(6, destination.map(DBusValue.string))
    field(7, sender.map(DBusValue.string))
    field(8, body.isEmpty ? nil : .signature(signature))
    var encoder = DBusEncoder(reservingCapacity: 64 + bodyEncoder.bytes.count)
    encoder.append(UInt8(ascii: "l"))
    encoder.append(kind.rawValue)
    encoder.append(flags)
    encoder.append(UInt8(1))
    encoder.append(UInt32(truncatingIfNeeded: bodyEncoder.bytes.count))
    encoder.append(serial)
    encoder.append(.array(.structure([.byte, .variant]), fields))
    encoder.pad(to: 8)
    return encoder.bytes + bodyEncoder.bytes
  }

  // MARK: Decoding

  /// The length of the whole message that starts with `prefix`, or `nil` while fewer than 16 bytes
  /// are there.
  /// - Throws: `DBusWireError` for a bad endianness byte, or a message longer than `limit` (at most
  ///   the specification's 128 MiB).
  public static func frameLength(_ prefix: some Collection<UInt8>, limit: Int = maximumLength) throws(DBusWireError)
    -> Int?
  {
    guard prefix.count >= 16 else { return nil }
    let head = Array(prefix.prefix(16))
    let littleEndian: Bool
    switch head[0] {
    case UInt8(ascii: "l"): littleEndian = true
    case UInt8(ascii: "B"): littleEndian = false
    default: throw DBusWireError(.invalidHeader, "the endianness byte is 0x\(String(head[0], radix: 16))", offset: 0)
    }
    var decoder = DBusDecoder(bytes: head, littleEndian: littleEndian, offset: 4)
    let bodyLength = Int(try decoder.read(UInt32.self))
    decoder.offset = 12
    let fieldsLength = Int(try decoder.read(UInt32.self))
    let headerLength = (16 + fieldsLength + 7) / 8 * 8
    let total = headerLength + bodyLength
    guard total <= min(limit, maximumLength) else {
      throw DBusWireError(.tooLong, "a message of \(total) bytes exceeds the bound of \(limit)", offset: 4)
    }
    return total
  }

  /// Decodes exactly one message from `bytes`.
  /// - Throws: `DBusWireError` for anything malformed; `offset` says where.
  public static func decode(_ bytes: [UInt8]) throws(DBusWireError) -> DBusMessage {
    guard let total = try frameLength(bytes) else {
      throw DBusWireError(.truncated, "a message is at least 16 bytes, not \(bytes.count)", offset: bytes.count)
    }
    guard total == bytes.count else {
      throw DBusWireError(.truncated, "the header announces \(total) bytes, not \(bytes.count)", offset: 0)
    }
    var decoder = DBusDecoder(bytes: bytes, littleEndian: bytes[0] == UInt8(ascii: "l"), offset: 1)
    guard let kind = Kind(rawValue: try decoder.readByte()) else {
      throw DBusWireError(.invalidHeader, "unknown message type \(bytes[1])", offset: 1)
    }
    let flags = try decoder.readByte()
    guard try decoder.readByte() == 1 else {
      throw DBusWireError(.invalidHeader, "protocol version \(bytes[3]) is not 1", offset: 3)
    }
    let bodyLength = Int(try decoder.read(UInt32.self))
    let serial = try decoder.read(UInt32.self)
    guard serial != 0 else { throw DBusWireError(.invalidHeader, "the serial is 0", offset: 8) }
    var message = DBusMessage(kind: kind, flags: flags, serial: serial)
    let fields = try decoder.readValue(.array(.structure([.byte, .variant])))
    var signature = ""
    for case .structure(let pair) in fields.elements ?? [] {
      guard case .byte(let code) = pair[0], case .variant(let value) = pair[1] else { continue }
      try message.apply(field: code, value, signature: &signature)
    }
    try decoder.align(8)
    guard decoder.remaining == bodyLength else {
      throw decoder.failure(.invalidHeader, "the body is \(decoder.remaining) bytes, not \(bodyLength)")
    }
    try message.checkRequiredFields()
    let types: [DBusType]
    do { types = try DBusType.parse(signature) } catch {
      throw DBusWireError(.invalidSignature, "body signature: \(error.message)", offset: 16)
    }
    for type in types { message.body.append(try decoder.readValue(type)) }
    guard decoder.remaining == 0 else {
      throw decoder.failure(.invalidHeader, "\(decoder.remaining) bytes follow the body its signature describes")
    }
    return message
  }

  private mutating func apply(field code: UInt8, _ value: DBusValue, signature: inout String) throws(DBusWireError) {
    func wrong(_ name: String) -> DBusWireError {
      DBusWireError(.invalidHeader, "header field \(name) has type \(value.type)", offset: 16)
    }
    switch code {
    case 1:
      guard case .objectPath(let text) = value else { throw wrong("PATH") }
      path = text
    case 2:
      guard case .string(let text) = value else { throw wrong("INTERFACE") }
      interface = text
    case 3:
      guard case .string(let text) = value else { throw wrong("MEMBER") }
      member = text
    case 4:
      guard case .string(let text) = value else { throw wrong("ERROR_NAME") }
      errorName = text
    case 5:
      guard case .uint32(let number) = value else { throw wrong("REPLY_SERIAL") }
      replySerial = number
    case 6:
      guard case .string(let text) = value else { throw wrong("DESTINATION") }
      destination = text
    case 7:
      guard case .string(let text) = value else { throw wrong("SENDER") }
      sender = text
    case 8:
      guard case .signature(let text) = value else { throw wrong("SIGNATURE") }
      signature = text
    default:
      break  // UNIX_FDS and fields a later specification adds: ignored, as the specification asks.
    }
  }

  private func checkRequiredFields() throws(DBusWireError) {
    let missing: String? =
      switch kind {
      case .methodCall: path == nil ? "PATH" : member == nil ? "MEMBER" : nil
      case .methodReturn: replySerial == nil ? "REPLY_SERIAL" : nil
      case .error: errorName == nil ? "ERROR_NAME" : replySerial == nil ? "REPLY_SERIAL" : nil
      case .signal: path == nil ? "PATH" : interface == nil ? "INTERFACE" : member == nil ? "MEMBER" : nil
      }
    if let missing { throw DBusWireError(.invalidHeader, "a \(kind) lacks its \(missing) field", offset: 16) }
  }
}
