import LogStore

/// An object of a save with plain reference fields: the targets of those fields are
/// `SaveSessionState.plainTargets[targets]`.
struct PlainReferrer {
    let slot: ObjectSlot
    let object: any PersistentObject
    let targets: Range<Int>
}

extension SaveSession {
    /// Refuses a save that would store a reference cycle made only of plain fields (`var next: Node`,
    /// `var tasks: [Task]`), before anything is written.
    ///
    /// A load decodes the target of a plain field before the object holding it (`init(from:)` needs the
    /// instance), so such a cycle could be saved but never loaded again (`LoadSession` reports it as
    /// `cyclicReference`). Cycles through ``ObjectRef``, ``ObjectList`` or ``LazyRef`` fields load, and are
    /// not refused. Every object on a plain cycle holds the next one strongly, so when one of them is in
    /// this save all of them are encoded by it: the check sees the whole cycle, stored objects included.
    /// It runs only when an object this save writes has plain reference fields.
    /// - throws: ``ObjectStoreError`` `cyclicReference` naming the objects and fields of one cycle.
    func refusePlainCycles() throws(ObjectStoreError) {
        guard state.writesPlainReferences else { return }
        try encodePlainTargets()
        let referrers = state.plainReferrers
        let targets = state.plainTargets
        var position = IDTable<Int>(minimumCapacity: referrers.count)
        for index in referrers.indices { position[referrers[index].slot.id] = index }
        // Depth-first, iteratively (long chains must not exhaust the stack): 0 not seen, 1 on the current
        // path, 2 done (no cycle through it).
        var mark = [UInt8](repeating: 0, count: referrers.count)
        var path: [(node: Int, next: Int)] = []
        // A cycle this save would store passes through an object it writes: the walk starts from those.
        for start in referrers.indices where mark[start] == 0 && referrers[start].slot.writtenIn == generation {
            mark[start] = 1
            path.append((start, referrers[start].targets.lowerBound))
            while let (node, next) = path.last {
                guard next < referrers[node].targets.upperBound else {
                    mark[node] = 2
                    path.removeLast()
                    continue
                }
                path[path.count - 1].next = next + 1
                guard let target = position[targets[next]] else { continue }
                switch mark[target] {
                case 0:
                    mark[target] = 1
                    path.append((target, referrers[target].targets.lowerBound))
                case 1:
                    guard let first = path.lastIndex(where: { $0.node == target }) else { continue }
                    throw cycleError(path[first...].map { referrers[$0.node] })
                default:
                    continue
                }
            }
        }
    }

    /// Encodes the unchanged models that plain fields of the encoded objects reach (transitively), which the
    /// save skipped: a new cycle may pass through them. An unchanged model whose record refers to nothing
    /// cannot be on a cycle and is left alone.
    private func encodePlainTargets() throws(ObjectStoreError) {
        var next = 0
        while next < state.plainTargets.count {
            let end = state.plainTargets.count
            for index in next..<end {
                let id = state.plainTargets[index]
                guard let slot = context.cache.slot(id), slot.queuedIn != generation, let object = slot.object,
                    !(slot.isUnchangedModel && slot.storedWithoutReferences)
                else { continue }
                slot.queuedIn = generation
                state.queue.append((slot, object))
            }
            next = end
            try encodeAll()
        }
    }

    /// The error for the plain cycle `cycle` (each referrer refers to the next, the last to the first),
    /// named from an object this save writes, with the field of each step.
    private func cycleError(_ cycle: [PlainReferrer]) -> ObjectStoreError {
        var cycle = cycle
        if let written = cycle.firstIndex(where: { $0.slot.writtenIn == generation }) {
            cycle = Array(cycle[written...] + cycle[..<written])
        }
        func name(_ referrer: PlainReferrer) -> String {
            let typeName = context.typeName(of: referrer.object)
            return referrer.slot.storedHash == nil ? "\(typeName) (new)" : "\(typeName) \(referrer.slot.id)"
        }
        var steps: [String] = []
        var fields: [String] = []
        for (index, referrer) in cycle.enumerated() {
            let next = cycle[(index + 1) % cycle.count]
            let field = fieldPath(of: referrer, referringTo: next.slot.id) ?? "?"
            fields.append(field)
            steps.append("\(name(referrer)), field \(field)")
        }
        var error = ObjectStoreError(
            .cyclicReference,
            "a reference cycle through plain fields only could be saved but never loaded: "
                + steps.joined(separator: " → ") + " → back to \(name(cycle[0])); declare one of these fields "
                + "@ObjectRef (@ObjectList for an array) or LazyRef, or break the cycle; nothing was written",
            typeName: context.typeName(of: cycle[0].object), field: fields.first,
            objectID: cycle[0].slot.storedHash == nil ? nil : cycle[0].slot.id)
        error.objects = cycle.compactMap { $0.slot.storedHash == nil ? nil : $0.slot.id }
        return error
    }

    /// The coding path of `referrer`'s first plain field referring to `target`, found by encoding the
    /// object again with field paths noted (the objects it references are numbered and queued already, so
    /// this changes nothing); nil if the encoding fails.
    private func fieldPath(of referrer: PlainReferrer, referringTo target: ObjectID) -> String? {
        encoder.state.tracesPlainFields = true
        encoder.state.plainFields.removeAll()
        defer {
            encoder.state.tracesPlainFields = false
            encoder.state.plainFields.removeAll()
        }
        guard let registered = try? registration(of: referrer.object),
            (try? encoder.encode(referrer.object, as: registered)) != nil
        else { return nil }
        return encoder.state.plainFields.first { $0.target == target }?.path
    }
}
