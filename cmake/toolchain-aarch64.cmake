# Cross build for aarch64-linux-gnu on a Debian host (see docs/aarch64.md):
#   cmake -G Ninja -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake
# Libraries come from Debian multiarch (-dev:arm64 packages in /usr/lib/aarch64-linux-gnu,
# headers shared in /usr/include); scripts/setup.sh --cross installs them.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(LOCKPROF_CROSS_TRIPLE aarch64-linux-gnu)

set(CMAKE_C_COMPILER ${LOCKPROF_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${LOCKPROF_CROSS_TRIPLE}-g++)

# Multiarch keeps arm64 libraries beside the host's under /usr, so the root path is /usr's
# parent and the libraries are told apart by their multiarch directory. /usr/aarch64-linux-gnu
# holds the cross libc and libstdc++.
set(CMAKE_LIBRARY_ARCHITECTURE ${LOCKPROF_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH /usr/${LOCKPROF_CROSS_TRIPLE} /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)  # host tools (pkg-config, objdump) run here
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Without this, find_library could still pick an x86_64 library from /usr/lib/x86_64-linux-gnu
# (CMake searches lib/<arch> first, but the plain /usr/lib fallback holds no arch check).
set(CMAKE_IGNORE_PATH /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu)

# pkg-config (libdw) must read the arm64 .pc files only; the host's would hand back x86 paths.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${LOCKPROF_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

# gtest_discover_tests and ctest run the test binaries through qemu-user (binfmt_misc is not
# relied on). Override the CPU with -DLOCKPROF_QEMU_CPU=cortex-a72 to run without LSE.
set(LOCKPROF_QEMU_CPU max CACHE STRING "qemu-aarch64 -cpu model for ctest")
# -L / (the multiarch root): the cross sysroot's ld.so with the multiarch libc6:arm64 hangs.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-cpu;${LOCKPROF_QEMU_CPU};-L;/)
