import Foundation
import ReaderCore

#if canImport(CryptoKit)
  import CryptoKit
#elseif canImport(CLibcrypto)
  import CLibcrypto
#endif

/// A SHA-256 digest computed piece by piece, as bytes arrive: so an image can be hashed while it is read,
/// each piece while it is still in the cache, instead of in a second pass over all of it.
///
/// ```swift
/// var hasher = SHA256Hasher()
/// bytes.withUnsafeBytes { hasher.update($0) }
/// let digest = hasher.finalize()  // the same as SHA256Checksum.compute(bytes)
/// ```
struct SHA256Hasher: ~Copyable {
  #if canImport(CryptoKit)
    private var hasher = CryptoKit.SHA256()
  #else
    private let context: OpaquePointer
  #endif

  init() {
    #if !canImport(CryptoKit)
      // These fail only when libcrypto cannot allocate: nothing a caller can handle.
      guard let context = EVP_MD_CTX_new() else { preconditionFailure("libcrypto could not allocate a digest") }
      precondition(EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1, "libcrypto could not start a SHA-256 digest")
      self.context = context
    #endif
  }

  deinit {
    #if !canImport(CryptoKit)
      EVP_MD_CTX_free(context)
    #endif
  }

  /// Adds `bytes` to the digest.
  mutating func update(_ bytes: UnsafeRawBufferPointer) {
    guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
    #if canImport(CryptoKit)
      hasher.update(bufferPointer: UnsafeRawBufferPointer(start: base, count: bytes.count))
    #else
      precondition(EVP_DigestUpdate(context, base, bytes.count) == 1, "libcrypto could not add to a SHA-256 digest")
    #endif
  }

  /// The digest of every byte added.
  consuming func finalize() -> SHA256Checksum {
    #if canImport(CryptoKit)
      return SHA256Checksum(bytes: Array(hasher.finalize()))!
    #else
      var digest = [UInt8](repeating: 0, count: 32)
      var length: UInt32 = 0
      let status = digest.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
      precondition(status == 1 && length == 32, "libcrypto could not finish a SHA-256 digest")
      return SHA256Checksum(bytes: digest)!
    #endif
  }
}
