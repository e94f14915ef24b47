import CXXHash
import Foundation

/// How ODB keys compare: one fixed, locale-independent case folding.
///
/// The folded form of a key is, for a key of ASCII characters only, the key with `A`–`Z` mapped to
/// `a`–`z`; otherwise `key.lowercased().uppercased().lowercased()` (Unicode's full, locale-independent
/// case mappings of the Swift runtime), normalized to NFC. Two keys are the same key when their folded
/// forms are equal. This agrees with Unicode full case folding (CaseFolding.txt, status C + F) for
/// nearly every character:
/// - `"FEeDs"` finds `"feeds"`;
/// - `"Straße"`, `"STRASSE"` and `"strasse"` are one key (ß and ẞ fold to `ss`), as are `"ﬁle"` and
///   `"FILE"`, and `"ΟΔΟΣ"`, `"οδος"`, `"οδοσ"` (final sigma folds to σ);
/// - a precomposed `é` and `e` + combining acute are one key (NFC);
/// - unlike full case folding, dotless `ı` folds to `i` (it uppercases to `I`); no Turkish or other
///   locale rules apply, ever.
///
/// A key keeps the spelling it was created with; replacing its value keeps that spelling.
enum ODBKey {
    /// The folded form of `key`.
    @inline(__always)
    static func fold(_ key: String) -> String {
        var ascii = true
        var hasUpper = false
        for byte in key.utf8 {
            if byte >= 0x80 {
                ascii = false
                break
            }
            if byte &- 0x41 < 26 { hasUpper = true }
        }
        if ascii {
            guard hasUpper else { return key }
            return String(unsafeUninitializedCapacity: key.utf8.count) { buffer in
                var index = 0
                for byte in key.utf8 {
                    buffer[index] = byte &- 0x41 < 26 ? byte | 0x20 : byte
                    index += 1
                }
                return index
            }
        }
        return key.lowercased().uppercased().lowercased().precomposedStringWithCanonicalMapping
    }

    /// The 64-bit hash of a folded key (XXH3-64 of its UTF-8 bytes, seed 0): large tables place a key in
    /// a bucket by its low bits.
    static func hash(folded: String) -> UInt64 {
        var folded = folded
        return folded.withUTF8 { bytes in XXH3_64bits(bytes.baseAddress, bytes.count) }
    }
}
