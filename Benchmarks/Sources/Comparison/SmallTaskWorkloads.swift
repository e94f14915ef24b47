import BenchmarkSupport
import Foundation
import GRDB
import LogStore
import LogStoreObjects
import LogStorePersistent

// A graph of small records: tasks (a short title, done, a priority) carrying 0–3 of 50 shared tags, saved in
// saves of 1,000 and loaded cold (every task with its tags). Through LogStoreObjects (`@Persistent`), and
// through GRDB as a user would model it in SQLite: `task` and `tag` tables and a `taskTag` join table.

/// A small task, as a LogStoreObjects user declares it.
@Persistent("SmallTask") final class SmallTask {
    var title: String
    var done: Bool
    var priority: Int
    var tags: [SmallTag]

    init(title: String, done: Bool, priority: Int, tags: [SmallTag]) {
        self.title = title
        self.done = done
        self.priority = priority
        self.tags = tags
    }
}

/// A tag that many tasks share.
@Persistent("SmallTag") final class SmallTag {
    var name: String
    init(name: String) { self.name = name }
}

/// The values of one small task (the same for both stores).
struct SmallTaskValues: Sendable {
    var title: String
    var done: Bool
    var priority: Int
    /// Indexes into the tags, distinct.
    var tags: [Int]

    static let tagCount = 50
    static let tagNames = (0..<tagCount).map { "tag-\($0)" }
    private static let verbs = ["Buy", "Call", "Email", "Fix", "Plan", "Read", "Pay", "Book", "Clean", "Send"]
    private static let objects = [
        "milk", "the dentist", "Anna", "the bike", "the trip", "the report", "rent", "a table", "the garage",
        "the invoice", "flowers", "the car", "tickets", "the roof",
    ]
    private static let whens = ["", " today", " tomorrow", " on Friday", " next week", " before noon"]

    /// Task `number`: a title such as "Call the dentist tomorrow" (8–30 bytes), done one time in three,
    /// priority 0..<4, 0–3 distinct tags.
    init(number: Int) {
        var random = TaskGenerator(seed: 0x5A11_0000_0000 &+ UInt64(number))
        title =
            Self.verbs[random.below(Self.verbs.count)] + " " + Self.objects[random.below(Self.objects.count)]
            + Self.whens[random.below(Self.whens.count)]
        done = random.below(3) == 0
        priority = random.below(4)
        var picked: [Int] = []
        for _ in 0..<random.below(4) {
            let tag = random.below(Self.tagCount)
            if !picked.contains(tag) { picked.append(tag) }
        }
        tags = picked
    }
}

/// Saves of 1,000 new tasks (durable), then open + a cold load of every task and its tags, and bytes on disk.
/// LogStore also reports its objects' payload bytes (before compression and framing), which the
/// bytes-on-disk floor compares with.
struct SmallTaskWorkload {
    let tasks: [SmallTaskValues]
    var count: Int { tasks.count }
    /// Tag references in all.
    var tagReferences: Int { tasks.reduce(0) { $0 + $1.tags.count } }

    init(count: Int) { tasks = (0..<count).map { SmallTaskValues(number: $0) } }

    private func seconds(_ start: UInt64) -> Double { Double(nanoseconds() - start) / 1e9 }
    private static let types: [any PersistentObject.Type] = [SmallTask.self, SmallTag.self]

    func runLogStore(directory: String) throws -> PeerRun {
        var result = PeerRun()
        let objects = try ObjectStore.open(at: directory, types: Self.types)
        let context = objects.makeContext()
        var start = nanoseconds()
        let tags = SmallTaskValues.tagNames.map { SmallTag(name: $0) }
        for tag in tags { try context.insert(tag) }
        for offset in stride(from: 0, to: count, by: 1_000) {
            for values in tasks[offset..<min(offset + 1_000, count)] {
                try context.insert(
                    SmallTask(
                        title: values.title, done: values.done, priority: values.priority,
                        tags: values.tags.map { tags[$0] }))
            }
            try context.save()
        }
        result.values["smallTaskSave"] = Double(count) / seconds(start)
        var payload = 0
        for id in try objects.store.ids() {
            payload += try objects.store.get(id)?.payload.count ?? 0
        }
        result.values["smallTaskPayload"] = Double(payload)
        try objects.close()
        result.values["smallTaskBytes"] = Double(directorySize(directory).logical)

        start = nanoseconds()
        let reopened = try ObjectStore.open(at: directory, types: Self.types)
        let loaded = try reopened.makeContext().fetch(FetchDescriptor<SmallTask>())
        var references = 0
        for task in loaded { references += task.tags.count }
        result.values["smallTaskLoad"] = Double(count) / seconds(start)
        guard loaded.count == count, references == tagReferences else {
            throw ComparisonError("LogStore loaded \(loaded.count) tasks, \(references) tags (\(tagReferences))")
        }
        try reopened.close()
        return result
    }

    /// A task as a GRDB user rebuilds it: a row, and its tags from the join table.
    private final class LoadedTask {
        let title: String
        let done: Bool
        let priority: Int
        var tags: [String] = []
        init(title: String, done: Bool, priority: Int) {
            self.title = title
            self.done = done
            self.priority = priority
        }
    }

    /// WAL with `synchronous = FULL`, as the key-value rows.
    func runGRDB(directory: String) throws -> PeerRun {
        var result = PeerRun()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/tasks.sqlite"
        var pool: DatabasePool? = try DatabasePool(path: path)
        try pool?.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(
                sql: """
                    CREATE TABLE tag(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                    CREATE TABLE task(id INTEGER PRIMARY KEY, title TEXT NOT NULL, done INTEGER NOT NULL,
                        priority INTEGER NOT NULL);
                    CREATE TABLE taskTag(task INTEGER NOT NULL REFERENCES task(id), position INTEGER NOT NULL,
                        tag INTEGER NOT NULL REFERENCES tag(id), PRIMARY KEY(task, position)) WITHOUT ROWID;
                    """)
        }
        var start = nanoseconds()
        try pool?.write { db in
            for (index, name) in SmallTaskValues.tagNames.enumerated() {
                try db.execute(sql: "INSERT INTO tag(id, name) VALUES (?, ?)", arguments: [index + 1, name])
            }
        }
        for offset in stride(from: 0, to: count, by: 1_000) {
            try pool?.write { db in
                let insertTask = try db.cachedStatement(
                    sql: "INSERT INTO task(id, title, done, priority) VALUES (?, ?, ?, ?)")
                let insertTag = try db.cachedStatement(sql: "INSERT INTO taskTag(task, position, tag) VALUES (?, ?, ?)")
                for number in offset..<min(offset + 1_000, count) {
                    let values = tasks[number]
                    try insertTask.execute(arguments: [number + 1, values.title, values.done, values.priority])
                    for (position, tag) in values.tags.enumerated() {
                        try insertTag.execute(arguments: [number + 1, position, tag + 1])
                    }
                }
            }
        }
        result.values["smallTaskSave"] = Double(count) / seconds(start)
        try pool?.close()
        pool = nil
        result.values["smallTaskBytes"] = Double(directorySize(directory).logical)

        start = nanoseconds()
        let reopened = try DatabasePool(path: path)
        let (loaded, references) = try reopened.read { db -> ([LoadedTask], Int) in
            var names: [Int64: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, name FROM tag") { names[row[0]] = row[1] }
            var byID: [Int64: LoadedTask] = [:]
            var loaded: [LoadedTask] = []
            let taskRows = try Row.fetchCursor(db, sql: "SELECT id, title, done, priority FROM task")
            while let row = try taskRows.next() {
                let task = LoadedTask(title: row[1], done: row[2], priority: row[3])
                byID[row[0]] = task
                loaded.append(task)
            }
            var references = 0
            let tagRows = try Row.fetchCursor(db, sql: "SELECT task, tag FROM taskTag ORDER BY task, position")
            while let row = try tagRows.next() {
                guard let task = byID[row[0]], let name = names[row[1]] else { continue }
                task.tags.append(name)
                references += 1
            }
            return (loaded, references)
        }
        result.values["smallTaskLoad"] = Double(count) / seconds(start)
        guard loaded.count == count, references == tagReferences else {
            throw ComparisonError("GRDB loaded \(loaded.count) tasks, \(references) tags (\(tagReferences))")
        }
        try reopened.close()
        return result
    }
}
