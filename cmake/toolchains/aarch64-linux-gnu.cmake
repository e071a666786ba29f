# Cross-compiling for aarch64 Linux (DGX Spark's Grace CPU) with Debian's cross toolchain
# (g++-aarch64-linux-gnu). Used by tests/kernels/aarch64 to run the NEON kernels' tests under
# qemu-user; also usable by hand:
#   cmake -B build/aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake ...
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(ARC_CROSS_PREFIX aarch64-linux-gnu- CACHE STRING "Prefix of the cross compiler's programs")
set(CMAKE_C_COMPILER ${ARC_CROSS_PREFIX}gcc)
set(CMAKE_CXX_COMPILER ${ARC_CROSS_PREFIX}g++)

# Libraries and headers come from the cross sysroot only; programs from the host.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Lets CTest / try_run execute target binaries on an x86-64 host.
find_program(ARC_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(ARC_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${ARC_QEMU_AARCH64} -L /usr/aarch64-linux-gnu)
endif()
