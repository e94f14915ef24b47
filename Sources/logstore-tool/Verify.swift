import ArgumentParser
import LogStore

/// `verify DIR`: checks every frame and every live record; exit code 0 when sound, 1 when not.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check every frame and live record of a store; exit 0 when sound, 1 when damaged.",
        discussion: "Changes nothing and takes no lock. Every problem is listed with its file and byte offset."
    )

    @OptionGroup var store: StoreDirectory

    func run() throws {
        let report = try Store.verify(at: store.directory)
        print("store: \(store.directory)")
        print("segments: \(report.segments), frames: \(report.frames), live objects checked: \(report.liveObjects)")
        for note in report.notes {
            print("note: \(note)")
        }
        for problem in report.problems {
            print("problem: \(problem.file) @ \(problem.offset.map(String.init) ?? "?"): \(problem.message)")
        }
        guard report.isSound else {
            print("DAMAGED: \(plural(report.problems.count, "problem"))")
            throw ExitCode(1)
        }
        print("sound")
    }
}
