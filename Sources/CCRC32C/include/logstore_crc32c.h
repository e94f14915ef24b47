#ifndef LOGSTORE_CRC32C_H
#define LOGSTORE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, initial value and final XOR 0xFFFFFFFF) of
/// `length` bytes at `data`, continuing from `crc` (0 to start). The checksum of version-2 frames.
///
/// Uses the CPU's CRC-32C instruction where there is one (x86-64 SSE 4.2, 64-bit ARM with the CRC
/// extension), chosen once at run time, and a table otherwise; all give the same result.
uint32_t logstore_crc32c(uint32_t crc, const void *data, size_t length);

/// Which implementation `logstore_crc32c` uses: 1 the CPU instruction, 0 the table.
int logstore_crc32c_uses_hardware(void);

/// The table implementation, whatever the CPU (tests compare the two).
uint32_t logstore_crc32c_portable(uint32_t crc, const void *data, size_t length);

#endif
