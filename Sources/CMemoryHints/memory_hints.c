// The hints are inline functions in include/logstore_memory_hints.h; a C target needs a source file.
#include "logstore_memory_hints.h"
