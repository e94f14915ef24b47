import LogStore

/// A consistency check of every table, as tests run at teardown (bbolt's habit).
extension ODB {
    /// Walks every table from the root and returns every problem found (empty when all is well): records
    /// that are missing or not ODB encoding, a table reached twice, directories whose size is not
    /// 2^depth, buckets deeper than their directory or not in exactly the slots of their low hash bits,
    /// keys in a bucket their hash does not lead to, and the same folded key twice in one table.
    /// - throws: ``ODBError`` `store` when no snapshot can be taken.
    public func verify() throws(ODBError) -> [String] {
        try reading { work throws(ODBError) in
            guard let root = work.rootID else { return [] }
            var problems: [String] = []
            var seen = Set<ObjectID>()
            var pending: [(ObjectID, [String])] = [(root, [])]
            while let (id, keys) = pending.popLast() {
                let place = "table \(ODBPath(trusted: keys)) (record \(id))"
                guard seen.insert(id).inserted else {
                    problems.append("\(place) is reached twice")
                    continue
                }
                let node: ODBNode
                do {
                    node = try work.node(id)
                } catch {
                    problems.append("\(place): \(error)")
                    continue
                }
                var entries: [ODBEntry] = []
                switch node {
                case .inline(let table):
                    entries = Array(table.entries)
                case .bucket:
                    problems.append("\(place) is a bucket record")
                case .hashed(let directory):
                    entries = check(directory, of: place, work, seen: &seen, problems: &problems)
                }
                var folded = Set<String>()
                for entry in entries {
                    if !folded.insert(ODBKey.fold(entry.key)).inserted {
                        problems.append("\(place) holds the key \"\(entry.key)\" twice")
                    }
                    if case .table(let child) = entry.content { pending.append((child, keys + [entry.key])) }
                }
            }
            return problems
        }
    }

    /// Checks a hashed table's directory and buckets; returns the entries of its buckets.
    private func check(
        _ directory: ODBDirectory, of place: String, _ work: ODBWork, seen: inout Set<ObjectID>,
        problems: inout [String]
    ) -> [ODBEntry] {
        guard directory.buckets.count == 1 << directory.depth else {
            problems.append("\(place): \(directory.buckets.count) slots for depth \(directory.depth)")
            return []
        }
        var entries: [ODBEntry] = []
        let mask = directory.buckets.count - 1
        for (slot, bucket) in directory.buckets.enumerated() where directory.buckets.firstIndex(of: bucket) == slot {
            guard seen.insert(bucket).inserted else {
                problems.append("\(place): bucket \(bucket) is used by another table")
                continue
            }
            guard case .bucket(let depth, let table)? = try? work.node(bucket), depth <= directory.depth else {
                problems.append("\(place): record \(bucket) is not a bucket of depth ≤ \(directory.depth)")
                continue
            }
            let low = slot & ((1 << depth) - 1)
            for index in 0...mask where (directory.buckets[index] == bucket) != (index & ((1 << depth) - 1) == low) {
                problems.append("\(place): slot \(index) and bucket \(bucket) of depth \(depth) disagree")
            }
            for entry in table.entries {
                let hash = ODBKey.hash(folded: ODBKey.fold(entry.key))
                if directory.bucket(for: hash) != bucket {
                    problems.append("\(place): key \"\(entry.key)\" is in bucket \(bucket), its hash leads elsewhere")
                }
            }
            entries += table.entries
        }
        return entries
    }
}
