#define _GNU_SOURCE
#include "csupport.h"

#include <stddef.h>
#include <sys/types.h> /* defines __GLIBC__ on glibc (tested below) */
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <sqlite3.h>
#include <string.h>
#if defined(__linux__)
#include <pthread.h>
#endif

int soundtrack_sqlite_without_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int soundtrack_keep_freed_memory(void) {
#if defined(__GLIBC__)
    int a = mallopt(M_MMAP_THRESHOLD, 1 << 30);
    int b = mallopt(M_TRIM_THRESHOLD, 0x7fffffff);
    return a && b;
#else
    return 0;
#endif
}

int soundtrack_name_thread(const char *name) {
#if defined(__linux__)
    char cut[16];
    strncpy(cut, name, sizeof cut - 1);
    cut[sizeof cut - 1] = 0;
    return pthread_setname_np(pthread_self(), cut);
#else
    (void)name;
    return 0;
#endif
}
