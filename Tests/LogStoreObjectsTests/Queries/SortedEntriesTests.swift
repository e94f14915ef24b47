import Foundation
import LogStore
import LogStoreExamples
import TestSupport
import Testing

@testable import LogStoreObjects

/// The two-layer ordered entries of an index against a sorted array, and the 64-bit prefixes that order
/// entries without reading their keys against the full comparison. Seeds are printed; set `LOGSTORE_SEED`
/// to replay one.
@Suite struct SortedEntriesTests {
    /// A random key: integers and doubles that collide, strings sharing long prefixes, compound keys.
    static func randomKey(_ random: inout SplitMix64) -> CompoundKey {
        let first: IndexValue
        switch random.next() % 5 {
        case 0: first = .int(Int64(random.next() % 300))
        case 1: first = .double(Double(random.next() % 300) / 2)
        case 2: first = .string("QT-0000000" + String(random.next() % 500))
        case 3: first = .string(String(random.next() % 40))
        default: first = .null
        }
        if random.next() % 4 == 0 { return CompoundKey([first, .int(Int64(random.next() % 3))]) }
        return CompoundKey(first)
    }

    /// Random inserts and removals (enough to merge the recent layer into the main one several times), with
    /// every read checked against the model: ranges by key and by prefix, both directions, early stops.
    @Test func entriesReadAsASortedArray() {
        let seed = testSeed("SortedEntriesTests", default: UInt64.random(in: 1...1 << 40))
        var random = SplitMix64(seed: seed)
        var entries = SortedEntries()
        var model: [IndexEntryKey] = []
        var nextID: UInt64 = 1
        var merges = 0
        for step in 0..<20_000 {
            let mainBefore = entries.main.count
            if !model.isEmpty && random.next() % 10 < 2 {
                let victim = model.remove(at: Int(random.next() % UInt64(model.count)))
                let removed = entries.remove(victim)
                #expect(removed, "seed \(seed), step \(step)")
            } else {
                let entry = IndexEntryKey(key: Self.randomKey(&random), id: ObjectID(nextID))
                nextID += 1
                entries.insert(entry)
                if entries.main.count > mainBefore { merges += 1 }
                model.insert(entry, at: model.firstIndex(where: { entry < $0 }) ?? model.count)
            }
            if random.next() % 200 == 0 {
                let absent = IndexEntryKey(key: Self.randomKey(&random), id: ObjectID(nextID + 1))
                let removed = entries.remove(absent)
                #expect(!removed, "seed \(seed), step \(step)")
            }
            guard step % 250 == 0 || step == 19_999 else { continue }
            #expect(entries.count == model.count, "seed \(seed), step \(step)")
            var all: [IndexEntryKey] = []
            entries.forEach(from: entries.startPosition, to: entries.endPosition) {
                all.append($0)
                return true
            }
            #expect(all.map(\.id) == model.map(\.id), "seed \(seed), step \(step)")
            for _ in 0..<6 { checkRange(entries, model, &random, "seed \(seed), step \(step)") }
        }
        #expect(merges >= 2, "seed \(seed): the recent layer was merged \(merges) times")
    }

    /// One random range (by key or by a prefix of the key's fields), read forwards and backwards, whole and
    /// stopped early.
    func checkRange(
        _ entries: SortedEntries, _ model: [IndexEntryKey], _ random: inout SplitMix64, _ context: String
    ) {
        let low = Self.randomKey(&random)
        let high = Self.randomKey(&random)
        let lowAfter = random.next() % 2 == 0
        let highAfter = random.next() % 2 == 0
        let byPrefix = random.next() % 2 == 0
        func inRange(_ entry: IndexEntryKey) -> Bool {
            if byPrefix {
                let a = entry.key.first.compare(low.first)
                let b = entry.key.first.compare(high.first)
                return (lowAfter ? a > 0 : a >= 0) && (highAfter ? b <= 0 : b < 0)
            }
            let a = entry.key.compare(low)
            let b = entry.key.compare(high)
            return (lowAfter ? a > 0 : a >= 0) && (highAfter ? b <= 0 : b < 0)
        }
        let start =
            byPrefix
            ? entries.position(ofPrefix: [low.first], after: lowAfter) : entries.position(ofKey: low, after: lowAfter)
        let end =
            byPrefix
            ? entries.position(ofPrefix: [high.first], after: highAfter)
            : entries.position(ofKey: high, after: highAfter)
        let expected = model.filter(inRange).map(\.id)
        var forward: [ObjectID] = []
        entries.forEach(from: start, to: end) {
            forward.append($0.id)
            return true
        }
        #expect(forward == expected, "\(context): forwards from \(low) to \(high)")
        var backward: [ObjectID] = []
        entries.forEachReversed(from: start, to: end) {
            backward.append($0.id)
            return true
        }
        #expect(backward == expected.reversed(), "\(context): backwards from \(high) to \(low)")
        let stop = Int(random.next() % 5)
        var first: [ObjectID] = []
        entries.forEach(from: start, to: end) {
            first.append($0.id)
            return first.count < stop
        }
        #expect(first == Array(expected.prefix(max(stop, 1))), "\(context): stopped after \(stop)")
    }

    /// Values at the edges of each kind: equal values share a prefix, and a prefix order is the value order.
    static let edgeValues: [IndexValue] = [
        .absent, .null, .bool(false), .bool(true),
        .int(.min), .int(-1), .int(0), .int(1), .int(1 << 53), .int(1 << 53 + 1), .int(.max),
        .uint(UInt64(Int64.max) + 1), .uint(.max),
        .double(-.infinity), .double(-1.5), .double(-0.0), .double(0.0), .double(1), .double(0.5),
        .double(9_007_199_254_740_992), .double(9_223_372_036_854_775_808), .double(.infinity), .double(.nan),
        .double(-.nan), .double(.leastNonzeroMagnitude),
        .string(""), .string("a"), .string("a\u{0}"), .string("abcdefg"), .string("abcdefgh"),
        .string("abcdefgi"), .string("QT-000000000001"), .string("QT-000000000002"), .string("Å"),
        .string("\u{10FFFF}"),
        .bytes([]), .bytes([0]), .bytes([0, 0, 0, 0, 0, 0, 0, 1]), .bytes([255, 255]),
        .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))),
        .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0))),
        .uuid(UUID(uuid: (255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))),
        .reference(ObjectID(1)), .reference(ObjectID(7)), .reference(ObjectID(8)), .reference(ObjectID(.max)),
    ]

    @Test func prefixesOrderAsValues() {
        for a in Self.edgeValues {
            for b in Self.edgeValues {
                let order = a.compare(b)
                if order == 0 { #expect(a.sortPrefix == b.sortPrefix, "\(a) and \(b) are equal") }
                if a.sortPrefix < b.sortPrefix { #expect(order < 0, "\(a) has the lower prefix but orders after \(b)") }
            }
        }
    }

    @Test func prefixesOrderAsRandomValues() {
        let seed = testSeed("SortedEntriesTests.prefixes", default: UInt64.random(in: 1...1 << 40))
        var random = SplitMix64(seed: seed)
        func value() -> IndexValue {
            switch random.next() % 5 {
            case 0: return .int(Int64(bitPattern: random.next()) >> Int64(random.next() % 64))
            case 1: return .double(Double(bitPattern: random.next()))
            case 2: return .uint(random.next() | 1 << 63)
            case 3: return .string(String((0..<Int(random.next() % 10)).map { _ in "ab\u{0}é"[random.next() % 4] }))
            default: return .double(Double(Int64(bitPattern: random.next()) >> Int64(random.next() % 64)))
            }
        }
        for _ in 0..<20_000 {
            let a = value()
            let b = value()
            let order = a.compare(b)
            if order == 0 { #expect(a.sortPrefix == b.sortPrefix, "seed \(seed): \(a) and \(b) are equal") }
            if a.sortPrefix < b.sortPrefix { #expect(order < 0, "seed \(seed): \(a) orders after \(b)") }
        }
    }
}

extension String {
    fileprivate subscript(_ offset: UInt64) -> Character { self[index(startIndex, offsetBy: Int(offset))] }
}
