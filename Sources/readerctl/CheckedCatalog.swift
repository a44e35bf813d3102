import Foundation
import ReaderKit

/// The catalog `update --install` gives its terminal: the releases of the manifest the check already
/// fetched, so the manifest is fetched once per run, and the images from the real catalog, stopped by
/// Ctrl-C and shown while they download (a download that waits on a slow server is not an install at
/// 0 %).
struct CheckedCatalog: UpdateCatalog {
  /// The releases of the fetched manifest.
  let releases: [UpdateRelease]
  /// Where the images come from.
  let images: any UpdateCatalog
  /// Stops a download (Ctrl-C).
  let cancellation: CatalogCancellation
  /// Told when a download starts, and how it ended.
  let downloads: @Sendable (Download) -> Void

  /// A download's start and end.
  enum Download {
    case started(FirmwareImage)
    case finished(FirmwareImage, ReaderError?)
  }

  func availableUpdate(for installed: InstalledSoftware, at now: Date) throws(ReaderError) -> UpdateAvailability {
    UpdateAvailability(choosingFrom: releases, for: installed, at: now)
  }

  func firmwareImage(for image: FirmwareImage) throws(ReaderError) -> Data {
    downloads(.started(image))
    do throws(ReaderError) {
      let bytes = try images.firmwareImage(for: image, cancellation: cancellation)
      downloads(.finished(image, nil))
      return bytes
    } catch {
      downloads(.finished(image, error))
      throw error
    }
  }
}
