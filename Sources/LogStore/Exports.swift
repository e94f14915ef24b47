// Users import `LogStore` alone: the engine's public API uses the format layer's `ObjectID`,
// `LogStoreError` and `LogStoreLimits` and the system layer's `SystemError` (and, for tests, its
// `FaultInjector`), so both lower layers are re-exported.
@_exported import LogStoreFormat
@_exported import LogStoreSystem
