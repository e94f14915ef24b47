#ifndef CMALLOCINFO_H
#define CMALLOCINFO_H

#include <stddef.h>

/// Bytes the C heap has handed out and not taken back: glibc's mallinfo2() uordblks (in use in the
/// arenas) plus hblkhd (chunks mapped with mmap). 0 where mallinfo2 is not available.
size_t cmallocinfo_heap_in_use(void);

/// glibc malloc_trim(0): gives free heap memory back to the system. Does nothing elsewhere.
void cmallocinfo_trim(void);

#endif
