#pragma once
// The C library's allocator, set for programs that step a simulation.

namespace moreau {

// Makes the allocator keep the memory a program frees for its next allocations instead of
// handing it back to the kernel. A time step allocates and frees the same large arrays at every
// step (contact lists, KKT matrices and their factors, Krylov vectors). With glibc's adaptive
// defaults, freed blocks above a few hundred kilobytes go back to the kernel, and the next step
// gets them as new pages that the kernel maps and zeroes: a fifth of the time of a 2D column
// drop step at 1,520 particles (docs/variational.md "Cost"). Programs call it once at start
// (the experiments, the command line tool, the variational step benchmark); results do not
// depend on it. The price is that a program's resident memory stays near its peak. No effect
// outside glibc.
void keep_freed_memory();

}  // namespace moreau
