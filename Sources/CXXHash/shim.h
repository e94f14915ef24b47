#ifndef LOGSTORE_CXXHASH_SHIM_H
#define LOGSTORE_CXXHASH_SHIM_H
#include <xxhash.h>
#endif
