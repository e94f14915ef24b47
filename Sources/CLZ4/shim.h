#ifndef LOGSTORE_CLZ4_SHIM_H
#define LOGSTORE_CLZ4_SHIM_H
#include <lz4.h>
#endif
