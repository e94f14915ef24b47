// Authenticated ciphers for encryption at rest, measured on this machine through swift-crypto (BoringSSL on
// Linux, CryptoKit on Apple platforms): AES-256-GCM against ChaCha20-Poly1305, sealing and opening messages
// of the sizes a store would encrypt (a small record, a batch, a large batch), with a 96-bit nonce that the
// caller derives (here a counter). Run from Benchmarks/:
//
//   swift run -c release CipherFigures [--megabytes 256] [--runs 5]
//
// Prints MiB/s of plaintext (median of the runs), the bytes each sealed message adds (nonce stored beside it
// + tag), and whether the processor has AES instructions (/proc/cpuinfo's `aes` flag on Linux).

import Crypto
import Foundation

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
let megabytes = Int(option("--megabytes") ?? "") ?? 256
let runs = Int(option("--runs") ?? "") ?? 5

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// A 96-bit nonce from a counter (the store would derive it from where the bytes are written).
func nonceBytes(_ counter: UInt64) -> [UInt8] {
    withUnsafeBytes(of: counter.littleEndian) { Array($0) } + [0, 0, 0, 0]
}

struct Cipher {
    let name: String
    let seal: ([UInt8], UInt64) throws -> [UInt8]
    let open: ([UInt8], UInt64) throws -> [UInt8]
}

let aesKey = SymmetricKey(size: .bits256)
let chachaKey = SymmetricKey(size: .bits256)
let ciphers = [
    Cipher(
        name: "AES-256-GCM",
        seal: { plain, counter in
            let box = try AES.GCM.seal(plain, using: aesKey, nonce: try AES.GCM.Nonce(data: nonceBytes(counter)))
            return Array(box.ciphertext) + Array(box.tag)
        },
        open: { sealed, counter in
            let box = try AES.GCM.SealedBox(
                nonce: try AES.GCM.Nonce(data: nonceBytes(counter)), ciphertext: sealed.dropLast(16),
                tag: sealed.suffix(16))
            return Array(try AES.GCM.open(box, using: aesKey))
        }),
    Cipher(
        name: "ChaCha20-Poly1305",
        seal: { plain, counter in
            let box = try ChaChaPoly.seal(
                plain, using: chachaKey, nonce: try ChaChaPoly.Nonce(data: nonceBytes(counter)))
            return Array(box.ciphertext) + Array(box.tag)
        },
        open: { sealed, counter in
            let box = try ChaChaPoly.SealedBox(
                nonce: try ChaChaPoly.Nonce(data: nonceBytes(counter)), ciphertext: sealed.dropLast(16),
                tag: sealed.suffix(16))
            return Array(try ChaChaPoly.open(box, using: chachaKey))
        }),
]

#if os(Linux)
    let cpuInfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
    let flags = cpuInfo.split(separator: "\n").first { $0.hasPrefix("flags") }.map { $0.split(separator: " ") } ?? []
    let model =
        cpuInfo.split(separator: "\n").first { $0.hasPrefix("model name") }.map {
            $0.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        } ?? "unknown"
    print("processor: \(model); AES instructions: \(flags.contains("aes") ? "yes" : "no")")
#endif
print("sealed message: plaintext + 16-byte tag (+ 12-byte nonce when stored beside it: 28 bytes)")
for size in [64, 256, 1_024, 4_096, 65_536] {
    let count = max(1, megabytes * 1_048_576 / size)
    var random = SystemRandomNumberGenerator()
    let plain = (0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }
    for cipher in ciphers {
        var sealTimes: [Double] = []
        var openTimes: [Double] = []
        for _ in 0..<runs {
            var last: [UInt8] = []
            sealTimes.append(
                try seconds {
                    for counter in 0..<UInt64(count) { last = try cipher.seal(plain, counter) }
                })
            let reference = last
            openTimes.append(
                try seconds {
                    for _ in 0..<count { _ = try cipher.open(reference, UInt64(count - 1)) }
                })
            let roundTrip = try cipher.open(reference, UInt64(count - 1))
            guard roundTrip == plain else {
                print("\(cipher.name): a round trip of \(size) bytes gave other bytes")
                exit(1)
            }
        }
        let mib = Double(count * size) / 1_048_576
        print(
            String(
                format: "%6d-byte messages, %@: seal %.0f MiB/s (%.2f us each), open %.0f MiB/s (%.2f us each)",
                size, cipher.name, mib / sealTimes.sorted()[runs / 2],
                sealTimes.sorted()[runs / 2] / Double(count) * 1e6,
                mib / openTimes.sorted()[runs / 2], openTimes.sorted()[runs / 2] / Double(count) * 1e6))
    }
}
