// RocksDB's C API from Debian's librocksdb-dev (`apt-get install librocksdb-dev`), for the side-by-side
// comparison only.
#include <rocksdb/c.h>
