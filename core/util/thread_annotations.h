#pragma once
// Clang's thread safety annotations (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html), as
// tf.data's and leveldb's: the lock that guards a field, and the locks a function needs, written
// where the compiler checks them. The test suite compiles core with clang's -Wthread-safety as an
// error (ctest: thread_safety_core); GCC, which builds the product, sees empty macros.
//
// Use them with sluice::Mutex and sluice::MutexLock (util/mutex.h): std::mutex carries no
// annotations in libstdc++, so the analysis cannot see it.

#if defined(__clang__)
#define SLUICE_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define SLUICE_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) SLUICE_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY SLUICE_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) SLUICE_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) SLUICE_THREAD_ANNOTATION(pt_guarded_by(x))
#define REQUIRES(...) SLUICE_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) SLUICE_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) SLUICE_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) SLUICE_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) SLUICE_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define RETURN_CAPABILITY(x) SLUICE_THREAD_ANNOTATION(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS SLUICE_THREAD_ANNOTATION(no_thread_safety_analysis)
