import Foundation

exit(ReaderCtl.main(Array(CommandLine.arguments.dropFirst()), console: .standard))
