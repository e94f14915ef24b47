@_spi(Engine) import LogStoreFormat

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The segment files of a read-only open or `verify`, each opened right after the directory was listed
/// and before any is read.
///
/// Such a load takes no lock, so a writer's compaction may delete a segment while it reads. An open
/// descriptor keeps a deleted file's data, so once every listed segment is pinned here nothing can be
/// taken away; the only window left is between the listing and these `open`s, and a segment deleted
/// in it is reported as ``Outcome/vanished(path:error:)`` so that the load starts again (see
/// "Readers beside a writer" in `Documentation/Format.md`).
///
/// Descriptors not handed over with ``take(_:)`` are closed when the object goes away.
package final class PinnedSegments {
    /// What pinning found.
    package enum Outcome {
        /// Every segment is open.
        case pinned(PinnedSegments)
        /// A segment of the listing is gone (`ENOENT`): the store changed after the listing.
        case vanished(path: String, error: SystemError)
    }

    private var descriptors: [UInt32: Int32] = [:]
    private let io: SystemIO
    /// The segments that could not be opened (when ``pin(_:in:io:listingUnopenable:)`` was asked to list
    /// them rather than throw), in increasing order.
    package private(set) var unopenable: [(number: UInt32, path: String, error: SystemError)] = []

    private init(io: SystemIO) { self.io = io }

    deinit {
        for fd in descriptors.values { io.close(fd) }
    }

    /// Opens (read-only) each segment in `numbers` of `directory`.
    /// - parameter listingUnopenable: list a segment that cannot be opened in ``unopenable`` and go on
    ///   (for `verify`, which lists every problem), rather than throw.
    /// - throws: ``LogStoreError`` with code `ioError` when a segment cannot be opened for another
    ///   reason than that it is gone (also when it is a symbolic link whose target does not exist: the
    ///   name is still there, and reading again would find it again), unless `listingUnopenable`.
    package static func pin(_ numbers: [UInt32], in directory: String, io: SystemIO, listingUnopenable: Bool = false)
        throws(LogStoreError) -> Outcome
    {
        let pinned = PinnedSegments(io: io)
        for number in numbers {
            let path = directory + "/" + LogFormat.segmentFileName(number)
            do throws(SystemError) {
                pinned.descriptors[number] = try io.open(path, flags: O_RDONLY | O_CLOEXEC)
            } catch  where error.isNoSuchFile {
                return .vanished(path: path, error: error)
            } catch  where listingUnopenable {
                pinned.unopenable.append((number, path, error))
            } catch {
                throw LogStoreError(.ioError, "cannot open segment", file: path, underlying: error)
            }
        }
        return .pinned(pinned)
    }

    /// The descriptor of segment `number`, still owned by this object; nil when it is not pinned.
    package func descriptor(_ number: UInt32) -> Int32? { descriptors[number] }

    /// Hands the descriptor of segment `number` over to the caller, who must close it (e.g. by giving
    /// it to ``SegmentFile/map(number:path:fd:capacity:populate:io:)``).
    package func take(_ number: UInt32) -> Int32? { descriptors.removeValue(forKey: number) }
}
