// CRC-32C for the frames of format version 2. Written for LogStore (not a copy of another library):
// a byte-wise table for the portable path, the SSE 4.2 `crc32` instruction on x86-64 and the ARMv8
// `crc32c` instructions on 64-bit ARM, selected once at run time.

#include "logstore_crc32c.h"

#include <string.h>

static uint32_t table[8][256];

static void build_table(void) {
    for (uint32_t byte = 0; byte < 256; byte++) {
        uint32_t crc = byte;
        for (int bit = 0; bit < 8; bit++) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
        table[0][byte] = crc;
    }
    for (uint32_t byte = 0; byte < 256; byte++) {
        for (int slice = 1; slice < 8; slice++) {
            uint32_t previous = table[slice - 1][byte];
            table[slice][byte] = (previous >> 8) ^ table[0][previous & 0xFF];
        }
    }
}

// Built before main (and before any thread of the program can call in), so no lock is needed.
__attribute__((constructor)) static void prepare_table(void) { build_table(); }

uint32_t logstore_crc32c_portable(uint32_t crc, const void *data, size_t length) {
    const unsigned char *bytes = data;
    crc = ~crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, bytes, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        word = __builtin_bswap64(word);
#endif
        uint32_t low = (uint32_t)word ^ crc;
        uint32_t high = (uint32_t)(word >> 32);
        crc = table[7][low & 0xFF] ^ table[6][(low >> 8) & 0xFF] ^ table[5][(low >> 16) & 0xFF] ^
              table[4][low >> 24] ^ table[3][high & 0xFF] ^ table[2][(high >> 8) & 0xFF] ^
              table[1][(high >> 16) & 0xFF] ^ table[0][high >> 24];
        bytes += 8;
        length -= 8;
    }
    while (length-- > 0) crc = (crc >> 8) ^ table[0][(crc ^ *bytes++) & 0xFF];
    return ~crc;
}

#if defined(__x86_64__)
#include <nmmintrin.h>

__attribute__((target("sse4.2"))) static uint32_t crc32c_hardware(uint32_t crc, const void *data, size_t length) {
    const unsigned char *bytes = data;
    uint64_t value = ~crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, bytes, 8);
        value = _mm_crc32_u64(value, word);
        bytes += 8;
        length -= 8;
    }
    uint32_t small = (uint32_t)value;
    while (length-- > 0) small = _mm_crc32_u8(small, *bytes++);
    return ~small;
}

static int hardware_available(void) {
    // Called from a constructor, which may run before the compiler's own CPU probe.
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
}

#elif defined(__aarch64__)
#include <arm_acle.h>
#if defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
static int hardware_available(void) { return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0; }
#else
// Every 64-bit ARM processor Apple ships has the CRC extension.
static int hardware_available(void) { return 1; }
#endif

__attribute__((target("crc"))) static uint32_t crc32c_hardware(uint32_t crc, const void *data, size_t length) {
    const unsigned char *bytes = data;
    uint32_t value = ~crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, bytes, 8);
        value = __crc32cd(value, word);
        bytes += 8;
        length -= 8;
    }
    while (length-- > 0) value = __crc32cb(value, *bytes++);
    return ~value;
}

#else
static int hardware_available(void) { return 0; }
static uint32_t crc32c_hardware(uint32_t crc, const void *data, size_t length) {
    return logstore_crc32c_portable(crc, data, length);
}
#endif

static int uses_hardware = 0;

__attribute__((constructor)) static void choose_implementation(void) { uses_hardware = hardware_available(); }

uint32_t logstore_crc32c(uint32_t crc, const void *data, size_t length) {
    return uses_hardware ? crc32c_hardware(crc, data, length) : logstore_crc32c_portable(crc, data, length);
}

int logstore_crc32c_uses_hardware(void) { return uses_hardware; }
