#ifndef LOGSTORE_CLZ4_SHIM_H
#define LOGSTORE_CLZ4_SHIM_H
// The static-linking-only part of lz4.h (LZ4_attach_dictionary, LZ4_resetStream_fast): Debian's shared
// liblz4 does not export it, so the module links the static archive (see module.modulemap).
#define LZ4_STATIC_LINKING_ONLY
#include <lz4.h>
#endif
