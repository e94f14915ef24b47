#define _GNU_SOURCE
#include "logstore_directory_exchange.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#if defined(__APPLE__)
#include <sys/stdio.h>
#elif defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

int logstore_exchange_paths(const char *first, const char *second) {
#if defined(__APPLE__)
    return renamex_np(first, second, RENAME_SWAP);
#elif defined(__linux__) && defined(SYS_renameat2)
    return (int)syscall(SYS_renameat2, AT_FDCWD, first, AT_FDCWD, second, 2 /* RENAME_EXCHANGE */);
#else
    (void)first;
    (void)second;
    errno = ENOSYS;
    return -1;
#endif
}
