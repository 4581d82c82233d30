#define _GNU_SOURCE
#include "ctestspawn.h"

#include <signal.h>
#include <spawn.h>
#include <fcntl.h>
#include <stddef.h>
#include <unistd.h>

int soundtrack_test_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[], const char *cwd, const int fds[3]) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int rc = posix_spawn_file_actions_init(&actions);
    if (rc != 0) return rc;
    rc = posix_spawnattr_init(&attributes);
    if (rc != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return rc;
    }
    if (cwd != NULL) rc = posix_spawn_file_actions_addchdir_np(&actions, cwd);
    for (int fd = 0; fd < 3 && rc == 0; fd++) {
        if (fds[fd] >= 0) rc = posix_spawn_file_actions_adddup2(&actions, fds[fd], fd);
    }
    short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
#if defined(__GLIBC__)
    /* After the dup2s: closes the sources too (they are above 2). */
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#elif defined(__APPLE__)
    flags |= POSIX_SPAWN_CLOEXEC_DEFAULT;
#endif
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(&attributes, &all);
    if (rc == 0) rc = posix_spawnattr_setsigmask(&attributes, &none);
    if (rc == 0) rc = posix_spawnattr_setflags(&attributes, flags);
    if (rc == 0) rc = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return rc;
}

int soundtrack_test_pipe(int fds[2]) {
#if defined(__linux__)
    return pipe2(fds, O_CLOEXEC);
#else
    if (pipe(fds) != 0) return -1;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
#endif
}
