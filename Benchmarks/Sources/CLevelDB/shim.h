// LevelDB's C API from Debian's libleveldb-dev (`apt-get install libleveldb-dev`), for the side-by-side
// comparison only.
#include <leveldb/c.h>
