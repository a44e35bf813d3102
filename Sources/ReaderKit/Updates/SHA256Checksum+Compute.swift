import Foundation
import ReaderCore

#if canImport(CryptoKit)
  import CryptoKit
#elseif canImport(CLibcrypto)
  import CLibcrypto
#endif

extension SHA256Checksum {
  /// The SHA-256 digest of `bytes`, computed by the platform: CryptoKit on Apple platforms, the system's
  /// libcrypto (OpenSSL) on Linux.
  ///
  /// ```swift
  /// SHA256Checksum.compute(Data("abc".utf8)).hex
  /// // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
  /// ```
  public static func compute(_ bytes: some ContiguousBytes) -> SHA256Checksum {
    bytes.withUnsafeBytes { buffer in
      #if canImport(CryptoKit)
        let digest = CryptoKit.SHA256.hash(data: buffer)
        return SHA256Checksum(bytes: Array(digest))!
      #else
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        // An empty buffer may have no base address: libcrypto reads nothing for zero bytes.
        let status = digest.withUnsafeMutableBufferPointer { output in
          EVP_Digest(buffer.baseAddress, buffer.count, output.baseAddress, &length, EVP_sha256(), nil)
        }
        // EVP_Digest fails only when libcrypto cannot allocate its context: nothing a caller can handle.
        precondition(status == 1 && length == 32, "libcrypto could not compute a SHA-256 digest")
        return SHA256Checksum(bytes: digest)!
      #endif
    }
  }
}
