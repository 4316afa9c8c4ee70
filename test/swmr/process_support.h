/* Child processes for the SWMR and crash drivers: start a program (optionally without the
 * VOL connector in its environment), wait for one with a deadline, wait for a log line. */
#ifndef H5SPARSE_PROCESS_SUPPORT_H
#define H5SPARSE_PROCESS_SUPPORT_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double monotonic_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Starts argv[0] with argv; with_connector 0 removes HDF5_VOL_CONNECTOR from its environment
 * (the process then reads sparse datasets through the filter plugin only). stdout_fd >= 0
 * replaces the child's standard output. */
static pid_t spawn(char *const argv[], int with_connector, int stdout_fd) {
  fflush(NULL);
  const pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(2);
  }
  if (pid == 0) {
    if (!with_connector) unsetenv("HDF5_VOL_CONNECTOR");
    if (stdout_fd >= 0) dup2(stdout_fd, STDOUT_FILENO);
    execv(argv[0], argv);
    perror(argv[0]);
    _exit(127);
  }
  return pid;
}

/* Waits for `pid` until `deadline` (monotonic seconds); kills it with SIGKILL when the
 * deadline passes. Returns the wait status, or -1 after a timeout. */
static int wait_until(pid_t pid, double deadline) {
  int status = 0;
  while (1) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return -1;
    if (monotonic_seconds() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    usleep(2000);
  }
}

static int exited_ok(int status) { return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0; }

#endif
