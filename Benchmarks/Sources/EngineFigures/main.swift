// Batched puts and plain random gets, timed without payload generation: the engine's two hottest paths,
// for before/after comparisons of the engine (it uses only API every version has). Run from Benchmarks/:
//
//   swift run -c release EngineFigures                 # 1,000,000 objects, 5 rounds
//   swift run -c release EngineFigures 200000 3        # another count and number of rounds
//
// Prints the median of the rounds: batched puts/s (batches of 1,000, fsync .always) and gets/s (one
// thread, warm page cache).

import BenchmarkSupport
import LogStore

let arguments = CommandLine.arguments
let objectCount = arguments.count > 1 ? Int(arguments[1]) ?? 1_000_000 : 1_000_000
let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 5 : 5

var generator = PayloadGenerator()
let pool = generator.pool(count: 10_000)

func median(_ values: [Double]) -> Double {
    values.sorted()[values.count / 2]
}

var putRates: [Double] = []
var getRates: [Double] = []
for round in 0...rounds {
    let scratch = TemporaryDirectory(prefix: "logstore-engine-figures")
    defer { scratch.remove() }
    let store = try Store.open(at: scratch.child("store"))
    let firstID = store.newID()
    var nextIndex = 0
    let start = nanoseconds()
    var done = 0
    while done < objectCount {
        let count = min(1000, objectCount - done)
        try store.write { batch in
            for _ in 0..<count {
                let object = pool[nextIndex % pool.count]
                nextIndex += 1
                batch.put(store.newID(), typeTag: object.typeTag, payload: object.payload)
            }
        }
        done += count
    }
    let putSeconds = Double(nanoseconds() - start) / 1e9
    let ids = randomIDs(count: 1_000_000, in: firstID.rawValue...(firstID.rawValue + UInt64(objectCount)))
    var bytes = 0
    for id in ids.prefix(100_000) { bytes &+= try store.get(id)?.payload.count ?? 0 }  // warm-up
    let getStart = nanoseconds()
    for id in ids { bytes &+= try store.get(id)?.payload.count ?? 0 }
    let getSeconds = Double(nanoseconds() - getStart) / 1e9
    try store.close()
    if bytes == 0 { print("no payload read") }
    if round == 0 { continue }  // the first round warms up
    putRates.append(Double(objectCount) / putSeconds)
    getRates.append(Double(ids.count) / getSeconds)
}
print("batched puts (1,000 per batch, fsync .always), median of \(rounds): \(Int(median(putRates))) puts/s")
print("random gets (1 thread, warm), median of \(rounds): \(Int(median(getRates))) gets/s")
