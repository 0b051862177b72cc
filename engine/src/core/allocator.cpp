#include "moreau/core/allocator.hpp"

#include <cstdlib>  // defines __GLIBC__ under glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace moreau {

void keep_freed_memory() {
#if defined(__GLIBC__)
  // Free memory at the top of the heap is returned only beyond 1 GiB, and blocks up to glibc's
  // largest mmap threshold (32 MiB on 64-bit systems) come from the heap, where freed ones are
  // reused. Larger blocks (the arrays of million-body worlds) are still mapped one by one;
  // the collision detector keeps those between steps itself.
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
#endif
}

}  // namespace moreau
