import Foundation

extension Process {
  /// A process, not yet started, that runs the Python script `script` with `arguments`: under
  /// `interpreter` when given, else under the `python3` the PATH finds (through /usr/bin/env), with
  /// this process's environment and no bytecode written beside the script.
  public convenience init(python script: URL, _ arguments: [String] = [], interpreter: URL? = nil) {
    self.init()
    if let interpreter {
      executableURL = interpreter
      self.arguments = [script.path] + arguments
    } else {
      executableURL = URL(fileURLWithPath: "/usr/bin/env")
      self.arguments = ["python3", script.path] + arguments
    }
    environment = ProcessInfo.processInfo.environment.merging(["PYTHONDONTWRITEBYTECODE": "1"]) { $1 }
  }
}
