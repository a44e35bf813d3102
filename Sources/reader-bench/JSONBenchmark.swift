import Foundation
import ReaderCore

/// Benchmarks `JSONReader` (the package's one JSON reader) against Foundation's `JSONSerialization`
/// reading the same bytes in the same round (see `Comparison`): an update manifest of `releases`
/// releases, the saved reader's record, and a recording's lines, each read `repeats` times. Both build a
/// whole tree of values; the reader also checks UTF-8, duplicate keys and its limits.
func runJSONBenchmark(releases: Int, repeats: Int) -> [Ratio] {
  let manifest = Array(jsonBenchmarkManifest(releases: releases).utf8)
  let record = Array(#"{"deviceType":"stripeM2","locationId":"tml_1","serialNumber":"STRM2-0001","version":1}"#.utf8)
  let line =
    Array(
      #"{"error":{"code":"connectionFailed","context":{"serialNumber":"S-1","why":"ü"},"message":"it \"failed\"\n","#
        .utf8)
    + Array(
      #""cause":{"kind":"dbus","name":"org.bluez.Error.Failed","message":"le-connection-abort-by-local"}},"#.utf8)
    + Array(#""name":"didFailToConnect","record":"event","serialNumber":"S-1","t":"1811.368189515651700"}"#.utf8)
  let limits = JSONReader.Limits(maximumSize: 1 << 24, maximumDepth: 16)
  let inputs = [("manifest", manifest, max(1, repeats / 100)), ("record", record, repeats), ("line", line, repeats)]
  var cases: [Comparison.Case] = []
  for (name, bytes, count) in inputs {
    let data = Data(bytes)
    cases.append(
      .init("json.\(name).reader") {
        for _ in 0..<count {
          guard case .object = try? JSONReader.read(bytes, limits: limits) else { preconditionFailure("it reads") }
        }
      })
    cases.append(
      .init("json.\(name).foundation") {
        for _ in 0..<count {
          precondition((try? JSONSerialization.jsonObject(with: data)) is [String: Any], "it reads")
        }
      })
  }
  let timings = Comparison(cases).measure()
  let ratios = inputs.map { input in
    timings.ratio(
      "json.\(input.0): JSONReader / JSONSerialization", "json.\(input.0).reader", over: "json.\(input.0).foundation",
      clock: .cpu)
  }
  print(
    """
    JSON benchmark: \(BenchOptions.current.rounds) rounds; JSONReader against JSONSerialization on the same bytes \
    (cost ratios: below 1 is cheaper)
      manifest: \(releases) releases, \(manifest.count) bytes, read \(max(1, repeats / 100)) times a round
      record: \(record.count) bytes and line: \(line.count) bytes, each read \(repeats) times a round
    """)
  print(ratios.map(\.line).joined(separator: "\n"))
  return ratios
}

/// A manifest of `releases` releases, as an update server would publish it.
func jsonBenchmarkManifest(releases: Int) -> String {
  let release = { (index: Int) in
    """
    {"deviceType":"stripeM2","locations":["tml_\(index)","tml_\(index + 1)"],"version":"2.01.\(index / 100).\(index % 100)",\
    "releasedAt":"2026-03-01T00:00:00Z","requiredAt":"2026-04-01T00:00:00Z","expiresAt":null,\
    "components":["firmware","config"],"durationEstimate":"estimate1To2Minutes",\
    "image":{"url":"images/m2-\(index).bin","size":\(20_000 + index),\
    "sha256":"cca9e4d0ea196306032122539800ae06458328f63820f73952d016ad975e1300"}}
    """
  }
  return "{\"manifestVersion\":1,\"releases\":[" + (0..<releases).map(release).joined(separator: ",") + "]}"
}
