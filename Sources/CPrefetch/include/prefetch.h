#ifndef SOUNDTRACK_PREFETCH_H
#define SOUNDTRACK_PREFETCH_H

/// Asks the CPU to bring the cache line at `address` in for a read soon (`__builtin_prefetch`;
/// Swift has no prefetch of its own): for loops over rows of a table in an order the hardware
/// cannot guess, such as a pick's candidate tracks scattered over the catalog. No effect on any
/// result, and an address outside the process does not fault.
static inline void soundtrack_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }

#endif
