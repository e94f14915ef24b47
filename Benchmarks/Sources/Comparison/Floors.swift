extension FloorCheck {
    /// The floors the report checks (LogStore against its peers, and absolute ones).
    static func all(figures: [String: Figure], payloadBytes: Double, reopenCount: Int) -> [FloorCheck] {
        let ours = PeerKind.logStore.rawValue
        let lmdb = PeerKind.lmdb.rawValue
        let sqlite = PeerKind.sqlite.rawValue
        var checks: [FloorCheck] = []
        func median(_ key: String, _ peer: String) -> Double? { figures[key]?.median(peer) }

        /// LogStore's median ÷ `peer`'s, met when at least `atLeast` (rates) or at most `atMost` (sizes).
        func ratio(
            _ key: String, over peer: String, atLeast: Double = 0, atMost: Double = .infinity, _ text: String
        ) {
            guard let mine = median(key, ours), let theirs = median(key, peer), theirs > 0 else { return }
            let value = mine / theirs
            let met = value >= atLeast && value <= atMost
            checks.append(FloorCheck(description: text, measured: String(format: "%.2f×", value), met: met))
        }
        ratio("puts", over: lmdb, atLeast: 1.5, "Batched puts ≥ 1.5× LMDB")
        ratio("gets1", over: lmdb, atLeast: 1.3, "Random gets, 1 thread ≥ 1.3× LMDB")
        ratio("gets2", over: lmdb, atLeast: 1.3, "Random gets, 2 threads ≥ 1.3× LMDB")
        if let one = median("gets1", ours), let two = median("gets2", ours), one > 0 {
            checks.append(
                FloorCheck(
                    description: "LogStore gets, 2 threads ≥ 1.7× 1 thread",
                    measured: String(format: "%.2f×", two / one),
                    met: two / one >= 1.7))
        }
        ratio("overwrite", over: lmdb, atLeast: 1.5, "Overwrite throughput ≥ 1.5× LMDB")
        ratio("commits8", over: sqlite, atLeast: 5, "Durable commits, 8 threads ≥ 5× SQLite")
        for key in ["bytesFresh", "bytesReclaimed"] {
            guard let mine = median(key, ours) else { continue }
            let others = [sqlite, lmdb].compactMap { median(key, $0) }
            guard let smallest = others.min() else { continue }
            checks.append(
                FloorCheck(
                    description: (key == "bytesFresh" ? "Bytes on disk, fresh" : "Bytes on disk after reclaiming")
                        + " < SQLite and LMDB",
                    measured: String(format: "%.2f× the smallest peer", mine / smallest), met: mine < smallest))
        }
        if let fresh = median("bytesFresh", ours), payloadBytes > 0 {
            checks.append(
                FloorCheck(
                    description: "Bytes on disk, fresh ≤ 45% of the payload",
                    measured: String(format: "%.1f%%", fresh / payloadBytes * 100), met: fresh <= 0.45 * payloadBytes))
        }
        let zstd = PeerKind.rocksDBZstd.rawValue
        ratio("bytesReclaimed", over: zstd, atMost: 1, "Bytes on disk after reclaiming ≤ RocksDB (ZSTD + dictionary)")
        ratio("graphLoad", over: sqlite, atLeast: 2, "Object graph: open + cold load ≥ 2× GRDB")
        ratio("graphSave", over: sqlite, atLeast: 3, "Object graph: save ≥ 3× GRDB")
        ratio("graphBytes", over: sqlite, atMost: 0.7, "Object graph: bytes on disk ≤ 0.7× GRDB")
        if let bytes = median("smallTaskBytes", ours), let payload = median("smallTaskPayload", ours), payload > 0 {
            checks.append(
                FloorCheck(
                    description: "Small tasks with tags: bytes on disk ≤ 0.9× their payload",
                    measured: String(format: "%.2f×", bytes / payload), met: bytes <= 0.9 * payload))
        }
        if let reopen = median("reopen1M", ours) {
            checks.append(
                FloorCheck(
                    description: "Reopen of \(grouped(reopenCount)) records ≤ 50 ms",
                    measured: String(format: "%.1f ms", reopen), met: reopen <= 50))
        }
        ratio("taskRange", over: sqlite, atLeast: 1.5, "Indexed range query (1%, decoded) ≥ 1.5× SQLite")
        if let lookups = median("taskLookups", ours) {
            checks.append(
                FloorCheck(
                    description: "Lookups by a unique indexed field ≥ 1M/s warm, one thread",
                    measured: String(format: "%.2fM/s", lookups / 1e6), met: lookups >= 1e6))
        }
        return checks
    }
}
