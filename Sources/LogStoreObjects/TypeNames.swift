import LogStore

/// Stable type tags for persistent type names.
///
/// The object layer (a later step) stores each object's type as a 32-bit tag in the engine's records;
/// the tag of a type name is its FNV-1a hash, so it is the same in every process and version.
public enum TypeNames {
    /// The 32-bit FNV-1a hash of `name`'s UTF-8 bytes: the engine type tag for that type name.
    ///
    /// For example, `TypeNames.tag(for: "Circle")` is the same number on every run.
    public static func tag(for name: String) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in name.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return hash
    }
}
