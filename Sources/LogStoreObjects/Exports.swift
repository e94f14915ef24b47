// Users import `LogStoreObjects` alone: its public API is built on the engine's (`ObjectStore.store` and
// `ODB.store` are the engine `Store`, opening takes `StoreOptions` with their `FsyncPolicy`, ids are
// `ObjectID`s, engine failures arrive as `LogStoreError`, `recovery` is a `RecoveryReport`), and maintenance
// (`compact()`, `verify()`, `collectGarbage()`) goes through that `Store`. So the engine module, with the
// lower layers it re-exports, is re-exported.
@_exported import LogStore
