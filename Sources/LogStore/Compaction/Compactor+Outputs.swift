@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Writing outputs: creating and finishing them, and pacing the copy beside the writer.
extension Compactor {
    func startOutput(
        expectedSize: UInt64, baseSequence: UInt64, recompression: CompactionOutput.Recompression?
    ) throws(LogStoreError) -> CompactionOutput {
        let number = pipeline.newSegmentNumber()
        do {
            return try CompactionOutput(
                number: number, directory: directory, io: io, expectedSize: expectedSize, baseSequence: baseSequence,
                recompression: recompression, encryption: options.encryption)
        } catch {
            throw LogStoreError(.ioError, "cannot create a compaction output", file: directory, underlying: error)
        }
    }

    func finish(_ output: CompactionOutput) throws(LogStoreError) -> SegmentFile {
        do {
            return try output.finish(directory: directory)
        } catch {
            throw LogStoreError(.ioError, "cannot finish a compaction output", file: output.path, underlying: error)
        }
    }

    func step(_ path: String, _ body: () throws(SystemError) -> Void) throws(LogStoreError) {
        do {
            try body()
        } catch {
            throw LogStoreError(.ioError, "compaction write failed", file: path, underlying: error)
        }
    }

    /// Sleeps as needed to keep the pass under ``CompactionOptions/bytesPerSecondLimit``.
    func throttle(bytes: UInt64, since started: ContinuousClock.Instant, copied: UInt64) {
        guard let limit = options.compaction.bytesPerSecondLimit, limit > 0 else { return }
        let due = Duration.seconds(Double(copied) / Double(limit))
        let elapsed = ContinuousClock.now - started
        if due > elapsed { SystemClock.sleep(due - elapsed) }
    }

    /// Lets a commit that is being written go first: the pass's next chunk (and its writeback) would
    /// otherwise queue the writer's sync behind a megabyte of compaction data. Waits, in steps of
    /// 100 µs, while the writer has a batch in flight, at most 2 ms per chunk.
    func yieldToWriter() {
        let deadline = SystemClock.monotonicNanoseconds() + 2_000_000
        while pipeline.isWriting, SystemClock.monotonicNanoseconds() < deadline {
            SystemClock.sleep(.microseconds(100))
        }
    }
}
