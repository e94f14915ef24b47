/// How a segment ends, as ``TailClassifier`` finds it (`Documentation/Format.md`, section 6.4).
///
/// It says what the bytes are, not what to do about them: the engine's recovery policy decides that
/// (cut, report, refuse) from the classification and the context.
package enum SegmentTail: Equatable, Sendable {
    /// Every frame is committed and valid up to the end (for a segment other than the append segment,
    /// the last one is its seal frame).
    case clean
    /// After the last commit, which ends at `committedEnd`, there are only zero bytes: space the writer
    /// extended the segment by ahead of its writes, left by a crash. It never held a frame.
    case preallocatedZeros(committedEnd: Int)
    /// After the last commit, which ends at `committedEnd`, damage that no valid frame follows: an
    /// append a crash cut short. Everything from `committedEnd` on is the torn tail.
    case tornTail(committedEnd: Int, damage: SegmentDamage)
    /// After the last commit, which ends at `committedEnd`, a group of commits a crash tore out of order
    /// (``TornGroup``): valid frames follow the damage, but only of that group. Cut like a torn tail.
    case tornGroup(committedEnd: Int, damage: SegmentDamage)
    /// Damage that no crash of the writer leaves (or found where no crash can have left it).
    case corrupt(SegmentDamage)

    /// Where the valid log ends when the tail is cut (or ignored): `committedEnd` for zeros, a torn tail
    /// or a torn group; nil for a clean or corrupt segment.
    package var validEnd: Int? {
        switch self {
        case .clean, .corrupt: return nil
        case .preallocatedZeros(let end), .tornTail(let end, _), .tornGroup(let end, _): return end
        }
    }
}
