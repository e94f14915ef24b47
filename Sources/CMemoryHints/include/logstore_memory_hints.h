#ifndef LOGSTORE_MEMORY_HINTS_H
#define LOGSTORE_MEMORY_HINTS_H

/// Asks the processor to start loading the cache line holding `address` for a read soon. Only a hint:
/// it reads nothing, changes nothing and never faults, whatever the address (an unmapped one is ignored).
static inline void logstore_prefetch_for_read(const void *address) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(address, 0, 3);
#else
    (void)address;
#endif
}

#endif
