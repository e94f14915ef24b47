import Dispatch
@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// The background sync of the ``FsyncPolicy/interval(_:)`` policy: a dispatch timer that
/// `fdatasync`s the active segment when something was written since the last sync.
///
/// `@unchecked Sendable`: its one stored property is a `let` to a dispatch source, whose methods
/// (`cancel`, `resume`) are documented as thread-safe; the handler only touches `Sendable` values (the
/// queue, the system calls and the change log, which it ends when the sync fails).
final class FlushTimer: @unchecked Sendable {
    private let timer: DispatchSourceTimer

    init(every milliseconds: Int, queue: ConditionLock<CommitQueue>, io: SystemIO, changes: ChangeLog) {
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "logstore.fsync"))
        timer.schedule(deadline: .now() + .milliseconds(milliseconds), repeating: .milliseconds(milliseconds))
        timer.setEventHandler {
            let target = queue.withLock { queue -> SegmentFile? in
                guard queue.dirty, !queue.closed, !queue.flushing, queue.failure == nil else { return nil }
                queue.dirty = false
                return queue.active
            }
            guard let file = target else { return }
            do {
                try io.syncData(file.fd, path: file.path)
            } catch {
                let failure = LogStoreError(.ioError, "background sync failed", file: file.path, underlying: error)
                queue.withLock { $0.failure = $0.failure ?? failure }
                changes.finish()
            }
        }
        timer.resume()
    }

    func cancel() { timer.cancel() }

    deinit { timer.cancel() }
}
