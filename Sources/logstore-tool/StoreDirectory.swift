import ArgumentParser
import LogStore

/// The store directory argument that every subcommand working on an existing store takes.
struct StoreDirectory: ParsableArguments {
    @Argument(help: "The store directory.")
    var directory: String

    /// Opens the store without the write lock and without repairing anything, so it works beside a
    /// writer; a torn tail is reported on standard error and left for the next writable open to cut.
    func openReadOnly() throws -> Store {
        let store = try Store.open(at: directory, options: StoreOptions(createIfMissing: false, readOnly: true))
        if let recovery = store.recovery {
            Console.error("note: \(recovery)")
        }
        return store
    }
}
