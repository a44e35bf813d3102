import Foundation

StandardStreams.prepare()
exit(ReaderCtl.main(Array(CommandLine.arguments.dropFirst()), console: .standard))
