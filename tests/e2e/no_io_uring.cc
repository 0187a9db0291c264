// no_io_uring: runs a program with io_uring_setup refused, as the default
// seccomp profiles of Docker (25.0+) and containerd 2.0 refuse it.
//
//   no_io_uring [--enosys] PROGRAM [ARGS...]
//
// A classic BPF seccomp filter (no libseccomp) answers io_uring_setup with
// EPERM (or ENOSYS with --enosys) and allows every other system call; it is
// inherited across execve, so PROGRAM and its children run under it.
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
constexpr unsigned kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
#else
#error "no_io_uring: unknown architecture"
#endif

int main(int argc, char** argv) {
  int first = 1;
  unsigned err = EPERM;
  if (argc > 1 && strcmp(argv[1], "--enosys") == 0) {
    err = ENOSYS;
    first = 2;
  }
  if (first >= argc) {
    fprintf(stderr, "usage: %s [--enosys] PROGRAM [ARGS...]\n", argv[0]);
    return 2;
  }
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    perror("no_io_uring: installing the seccomp filter");
    return 1;
  }
  execv(argv[first], argv + first);
  perror("no_io_uring: execv");
  return 127;
}
