import ArgumentParser
import LogStore

/// `verify DIR`: checks every frame, every live record and referential integrity; exit code 0 when
/// sound, 1 when not.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check every frame and live record of a store; exit 0 when sound, 1 when damaged.",
        discussion: """
            Changes nothing and takes no lock. Every problem is listed with its file and, when known, byte \
            offset: damaged frames and records, references to objects that are not live (dangling) and \
            roots that point at objects that are not live. Unreachable objects awaiting mark-sweep are a \
            note, not a problem.
            """
    )

    @OptionGroup var store: StoreDirectory

    func run() throws {
        let report = try Store.verify(at: store.directory)
        print("store: \(store.directory)")
        print(
            "segments: \(report.segments), frames: \(report.frames), dictionaries: \(report.dictionaries), "
                + "live objects checked: \(report.liveObjects)")
        for note in report.notes {
            print("note: \(note)")
        }
        for problem in report.problems {
            // `file @ offset: message`, or `file: message` when the offset is not known.
            print("problem: \(problem)")
        }
        guard report.isSound else {
            print("DAMAGED: \(plural(report.problems.count, "problem"))")
            throw ExitCode(1)
        }
        print("sound")
    }
}
