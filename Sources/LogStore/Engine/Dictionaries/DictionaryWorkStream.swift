@_spi(Engine) import LogStoreFormat

/// The commit pipeline's working LZ4 streams for compressing against the store's dictionary.
///
/// `@unchecked Sendable`: the streams are used only by `CommitPipeline.enqueue`, which runs with the
/// commit queue's lock held from start to end, so by one batch at a time; within a batch,
/// ``BatchPrecompression`` runs one half with `stream` and the other with `helperStream`, on two
/// threads, and returns after both. The references never change.
final class DictionaryWorkStream: @unchecked Sendable {
    /// Nil when LZ4 could not allocate it (payloads are then compressed without the dictionary).
    let stream = Compression.WorkStream()
    /// The second thread's stream for ``BatchPrecompression``; nil when LZ4 could not allocate it
    /// (batches are then compressed on the writing thread alone).
    let helperStream = Compression.WorkStream()
}
