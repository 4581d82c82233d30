#ifndef SOUNDTRACK_CSUPPORT_H
#define SOUNDTRACK_CSUPPORT_H

#include <stddef.h>

/// Small pieces of the C library that Swift's Glibc module does not import.

/// Keeps freed memory in the process: sets glibc's mmap and trim thresholds so that large
/// buffers freed and reallocated block after block are reused instead of being unmapped and
/// faulted in again as fresh zeroed pages. Returns 1 on success, 0 where unsupported.
int soundtrack_keep_freed_memory(void);

/// Turns off SQLite's memory statistics (a global mutex around every allocation SQLite makes);
/// must run before SQLite is first used in the process. Returns SQLite's result code (0: done).
int soundtrack_sqlite_without_memstatus(void);

/// Names the calling thread as `top -H` and `perf` show it (the kernel keeps 15 bytes; a longer
/// name is cut). Swift's Glibc module does not import pthread_setname_np, and Foundation's
/// `Thread.name` does not name the thread on Linux. Returns 0 on success.
int soundtrack_name_thread(const char *name);

/// The bundled catalog (CSV) built into the executable: its bytes, and their count in `size`
/// (0, and a null pointer, when the build did not embed it).
const unsigned char *soundtrack_bundled_catalog(size_t *size);

#endif
