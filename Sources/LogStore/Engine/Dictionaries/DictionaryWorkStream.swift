@_spi(Engine) import LogStoreFormat

/// The commit pipeline's working LZ4 stream for compressing against the store's dictionary.
///
/// `@unchecked Sendable`: `stream` is used only by `CommitPipeline.enqueue`, which runs with the commit
/// queue's lock held from start to end, so by one thread at a time; the reference itself never changes.
final class DictionaryWorkStream: @unchecked Sendable {
    /// Nil when LZ4 could not allocate it (payloads are then compressed without the dictionary).
    let stream = Compression.WorkStream()
}
