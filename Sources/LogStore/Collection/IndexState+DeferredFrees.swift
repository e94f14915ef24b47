/// Reference counting on counts a hint file gave. Open counts the references of a hinted segment's records
/// from the hint's reference lists, without reading the frames; a hint that leaves a reference out makes
/// a count too low, and freeing on it would destroy an object that is still referenced. So while a hint
/// open used is not yet compared with its segment, an object whose count drops to zero is not freed but
/// remembered (``IndexState/deferredFrees``), and an explicit delete first has every hint checked
/// (``Store/trustHints()``). Once every hint agrees, the remembered objects that still qualify are freed
/// (``Store/freeDeferredObjects()``); once one disagrees, none is freed by counting in the session.
enum HintTrust: Sendable, Equatable {
    /// No incoming count rests on an unchecked hint: open scanned every segment, or every hint it used
    /// was compared with its segment and agreed. Counting frees as soon as a count drops to zero.
    case checked
    /// Open counted references from hint files not yet compared with their segments: counting frees
    /// nothing yet, and a delete waits for the check.
    case unchecked
    /// A hint open used disagrees with its segment: the counts may be wrong until the store is opened
    /// again, so counting frees nothing and deletes are refused for the session.
    case disagrees
}

extension IndexState {
    /// Takes the remembered frees (``deferredFrees``) once the hints are checked: those still live, with
    /// no incoming reference, and not kept as pinned, in increasing id order. The others are forgotten
    /// (a put since, or a new reference, or a delete). Empty while the hints are not checked.
    mutating func takeDeferredFrees() -> [UInt64] {
        guard hintTrust == .checked, !deferredFrees.isEmpty else { return [] }
        let remembered = deferredFrees.sorted()
        deferredFrees = []
        return remembered.filter { id in
            guard let entry = index.entry(id), entry.incoming == 0 else { return false }
            return !keepsAsPinned(id, entry)
        }
    }
}
