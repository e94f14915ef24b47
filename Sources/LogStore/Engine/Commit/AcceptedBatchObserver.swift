/// What an observer of the commit pipeline learns of the batches it accepts: every id a batch put,
/// referenced or named as a root. Mark-sweep observes from its snapshot until its sweep, and spares
/// these ids and what they reach.
///
/// Updated under the pipeline's lock as each batch is accepted; a plain struct, so observing costs the
/// writer one `nil` check while nobody observes.
struct AcceptedBatchObserver {
    /// Ids named by the batches accepted since observing began.
    private(set) var touched: Set<UInt64> = []

    /// Notes the ids a batch just accepted named.
    mutating func accepted<Ids: Sequence<UInt64>>(touching ids: Ids) {
        touched.formUnion(ids)
    }
}
