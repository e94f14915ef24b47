// LMDB from Debian's liblmdb-dev (`apt-get install liblmdb-dev`), for the side-by-side comparison only.
#include <lmdb.h>
