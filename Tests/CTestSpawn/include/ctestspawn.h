#ifndef SOUNDTRACK_CTESTSPAWN_H
#define SOUNDTRACK_CTESTSPAWN_H

#include <sys/types.h>

/// The spawn of the tests' `Child` (Tests/SoundtrackTestSupport/Child.swift): the pieces of
/// posix_spawn that Swift's Glibc module does not import.

/// Starts `path` (an absolute path) with `argv` and `envp` (both NULL-terminated), in `cwd` unless
/// it is NULL. The child's descriptors 0, 1 and 2 are `fds[0]`, `fds[1]` and `fds[2]` (dup2'ed; a
/// negative entry leaves the parent's as it is); every other descriptor is closed in the child,
/// whether or not it is close-on-exec. Every signal is at its default action and unblocked.
/// Returns 0 and the child's id in `pid`, or an errno value (also when the executable cannot run).
int soundtrack_test_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[], const char *cwd, const int fds[3]);

/// A pipe whose two ends are close-on-exec from the start (pipe2 with O_CLOEXEC): `fds[0]` reads,
/// `fds[1]` writes. Returns 0, or -1 with errno set.
int soundtrack_test_pipe(int fds[2]);

#endif
