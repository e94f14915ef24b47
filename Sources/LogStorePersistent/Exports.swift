// `import LogStorePersistent` is all a user of `@Persistent` needs: the object layer (and with it the engine)
// and Observation, which the code of `@Persistent(observable: true)` uses, are re-exported.
@_exported import LogStoreObjects
@_exported import Observation
