import LogStore
// SplitMix64 (Steele, Lea, Flood 2014, in LogStoreExamples): a tiny, fast, seedable generator, so every
// run of the benchmarks writes the same objects and reads the same ids.
import LogStoreExamples

extension SplitMix64 {
    /// A number in `0..<bound` (Lemire's multiply-high; the bias is below 2^-32 for our bounds).
    @inline(__always)
    public mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0)
        return Int(truncatingIfNeeded: next().multipliedFullWidth(by: UInt64(bound)).high)
    }

    /// A number in `range`.
    @inline(__always)
    public mutating func inRange(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + below(range.count)
    }

    @inline(__always)
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}

/// One generated object: its type tag, payload, and references given as distances back from the
/// object's own id (so a pool of objects can be written under any ids).
public struct GeneratedObject: Sendable {
    public var typeTag: UInt32
    public var payload: [UInt8]
    /// `id - distance` is a referenced id; every distance is at least 1 (an earlier object).
    public var referenceDistances: [UInt64]

    /// The references of this object when it is stored as `id`, keeping only ids `>= firstID`
    /// (the first id of the store, so a reference never names an id that was never used).
    @inline(__always)
    public func references(for id: ObjectID, firstID: ObjectID) -> [ObjectID] {
        if referenceDistances.isEmpty { return [] }
        var result: [ObjectID] = []
        result.reserveCapacity(referenceDistances.count)
        for distance in referenceDistances where id.rawValue >= firstID.rawValue &+ distance {
            result.append(ObjectID(id.rawValue - distance))
        }
        return result
    }
}

/// Deterministic generator of JSON-like object payloads of 100–300 bytes, with 0–4 references to
/// earlier objects.
///
/// A payload looks like a user document, for example:
/// ```
/// {"id":2,"name":"Alan Borg","email":"alan.borg@mail.example","age":55,"city":"Kyoto",
///  "active":true,"tags":["sales"],"bio":"river with copper mostly sierra juniper cobalt ..."}
/// ```
/// Its length is drawn uniformly from 100...300 (mean 200) and met exactly: optional fields are left
/// out of short documents, and the free-text `bio` field is trimmed to the last byte. References
/// point uniformly at one of the `window` objects before it (or at any earlier one when fewer
/// exist), which keeps them local like a real object graph's.
public struct PayloadGenerator: Sendable {
    /// The default payload lengths.
    public static let lengthRange = 100...300
    public static let maxReferences = 4

    private var random: SplitMix64
    private var serial = 0
    /// How far back references reach.
    public var window: UInt64
    /// The payload lengths, drawn uniformly.
    public var lengthRange: ClosedRange<Int>

    public init(
        seed: UInt64 = 0x5EED_1065_7013_E000, window: UInt64 = 100_000, lengthRange: ClosedRange<Int> = Self.lengthRange
    ) {
        self.random = SplitMix64(seed: seed)
        self.window = window
        self.lengthRange = lengthRange
    }

    /// The next object. `earlierCount` is how many objects exist before it (references are only
    /// drawn among those).
    public mutating func next(earlierCount: UInt64) -> GeneratedObject {
        serial += 1
        let referenceCount = earlierCount == 0 ? 0 : random.below(Self.maxReferences + 1)
        var distances: [UInt64] = []
        if referenceCount > 0 {
            distances.reserveCapacity(referenceCount)
            let reach = min(earlierCount, window)
            for _ in 0..<referenceCount {
                distances.append(1 + UInt64(random.below(Int(reach))))
            }
        }
        let typeTag = UInt32(1 + random.below(4))
        return GeneratedObject(typeTag: typeTag, payload: payload(), referenceDistances: distances)
    }

    /// A pool of `count` objects generated as if they were the first `count` of a store; write them
    /// round-robin under fresh ids (references stay valid: they only ever point back).
    public mutating func pool(count: Int) -> [GeneratedObject] {
        (0..<count).map { next(earlierCount: UInt64($0)) }
    }

    /// One JSON-like payload of exactly the drawn length.
    ///
    /// `name`, `email` and `age` are always there; `city`, `active` and `tags` only when they leave
    /// room for the `bio`, which then fills the payload up to the target length.
    public mutating func payload() -> [UInt8] {
        let target = random.inRange(lengthRange)
        let bioOpen = Array(",\"bio\":\"".utf8)
        let close = Array("\"}".utf8)
        let reserve = bioOpen.count + close.count + 1  // at least one character of bio

        // Redraw the person (a few times at most) when even the mandatory fields leave no room.
        var head: [UInt8] = []
        for _ in 0..<8 {
            let first = random.pick(Words.firstNames)
            let last = random.pick(Words.lastNames)
            let domain = random.pick(Words.domains)
            let age = random.inRange(18...90)
            head = Array(
                "{\"id\":\(serial),\"name\":\"\(first) \(last)\",\"email\":\"\(first.lowercased()).\(last.lowercased())@\(domain)\",\"age\":\(age)"
                    .utf8)
            if head.count + reserve <= target { break }
        }
        func appendIfRoom(_ field: String) {
            let bytes = Array(field.utf8)
            if head.count + bytes.count + reserve <= target { head += bytes }
        }
        appendIfRoom(",\"city\":\"\(random.pick(Words.cities))\"")
        appendIfRoom(",\"active\":\(random.below(2) == 0 ? "true" : "false")")
        var tags = ",\"tags\":["
        for position in 0..<random.below(4) {
            tags += (position > 0 ? "," : "") + "\"\(random.pick(Words.tags))\""
        }
        appendIfRoom(tags + "]")

        var bytes = head + bioOpen
        let fill = max(target - head.count - bioOpen.count - close.count, 1)
        var written = 0
        while written < fill {
            if written > 0 {
                bytes.append(UInt8(ascii: " "))
                written += 1
                if written == fill { break }
            }
            let word = random.pick(Words.lorem).utf8
            let take = min(word.count, fill - written)
            bytes += word.prefix(take)
            written += take
        }
        // A trailing space would look odd; make it a letter.
        if bytes.last == UInt8(ascii: " ") { bytes[bytes.count - 1] = UInt8(ascii: "a") }
        bytes += close
        return bytes
    }
}

enum Words {
    static let firstNames = [
        "Ada", "Alan", "Grace", "Linus", "Barbara", "Edsger", "Margaret", "Dennis", "Frances", "Ken", "Radia",
        "Donald", "Sophie", "Niklaus", "Hedy", "John", "Katherine", "Tim", "Shafi", "Leslie", "Anita", "Bjarne",
        "Jean", "Yukihiro", "Mary", "Guido", "Joan", "Whitfield", "Adele", "Butler",
    ]
    static let lastNames = [
        "Lovelace", "Turing", "Hopper", "Torvalds", "Liskov", "Dijkstra", "Hamilton", "Ritchie", "Allen",
        "Thompson", "Perlman", "Knuth", "Wilson", "Wirth", "Lamarr", "McCarthy", "Johnson", "Berners",
        "Goldwasser", "Lamport", "Borg", "Stroustrup", "Sammet", "Matsumoto", "Keller", "Rossum", "Clarke",
        "Diffie", "Goldberg", "Lampson",
    ]
    static let domains = [
        "mail.example", "example.org", "corp.example.com", "uni.example.edu", "post.example.net", "inbox.example",
    ]
    static let cities = [
        "Lyon", "Oslo", "Porto", "Kyoto", "Austin", "Leeds", "Gdansk", "Quito", "Perth", "Tartu", "Bergen",
        "Recife", "Malmo", "Graz", "Nantes", "Turku",
    ]
    static let tags = [
        "admin", "beta", "staff", "premium", "trial", "verified", "legacy", "partner", "support", "ops", "dev",
        "sales",
    ]
    static let lorem = [
        "quiet", "river", "paper", "lantern", "orbit", "maple", "signal", "harbor", "cobalt", "meadow", "pixel",
        "granite", "velvet", "ember", "tundra", "willow", "cipher", "falcon", "saffron", "delta", "prism",
        "juniper", "atlas", "quartz", "nimbus", "copper", "sierra", "lumen", "fjord", "basalt", "the", "and",
        "of", "to", "in", "with", "loves", "builds", "reads", "writes", "mostly", "often",
    ]
}
