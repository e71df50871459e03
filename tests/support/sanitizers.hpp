// Which sanitizer instruments this build, for tests whose subject the instrumentation changes
// (generated code, descriptor counts). GCC defines __SANITIZE_ADDRESS__ and __SANITIZE_THREAD__;
// clang 14 (a sanitizer build configured with CXX=clang++) answers only through __has_feature.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define LOCKPROF_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LOCKPROF_TEST_ASAN 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define LOCKPROF_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LOCKPROF_TEST_TSAN 1
#endif
#endif
