// Thread-affinity checks: RINGKV_DCHECK_MAIN_THREAD() at the top of a
// function documented "main thread only" aborts, naming the function, when
// another thread calls it.
//
//   void Server::Execute(Client& c, Argv argv) {
//     RINGKV_DCHECK_MAIN_THREAD();
//     ...
//
// The main thread is the one that constructed the IoSystem (it runs I/O
// thread 0 and every command); until one exists, the first thread that runs
// a check (a unit test's thread). A forked child is a copy of the thread that
// forked, so a child of the main thread passes.
//
// Active where NDEBUG is not defined (Debug builds, the ASan build) or where
// RINGKV_THREAD_CHECKS is defined; elsewhere (Release) the macro is empty and
// costs nothing. Active, a check is a thread-id read and a compare.
//
// Lives in io/ because io/ is the layer that knows threads; core/ stays
// thread-agnostic and never checks.
#pragma once

namespace ringkv::io {

// The calling thread is the main thread from now on.
void BindMainThread();
// Whether the calling thread is the main thread; binds it when none is yet.
bool OnMainThread();
[[noreturn]] void MainThreadCheckFailed(const char* file, int line, const char* function);

}  // namespace ringkv::io

#if !defined(NDEBUG) || defined(RINGKV_THREAD_CHECKS)
#define RINGKV_THREAD_CHECKS_ENABLED 1
#define RINGKV_DCHECK_MAIN_THREAD()                                                       \
  do {                                                                                    \
    if (!::ringkv::io::OnMainThread()) {                                                  \
      ::ringkv::io::MainThreadCheckFailed(__FILE__, __LINE__, __func__);                  \
    }                                                                                     \
  } while (false)
#else
#define RINGKV_THREAD_CHECKS_ENABLED 0
#define RINGKV_DCHECK_MAIN_THREAD() \
  do {                              \
  } while (false)
#endif
