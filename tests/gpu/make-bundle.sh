#!/usr/bin/env bash
# Packs what tests/gpu/run-suite.sh needs from a tree built here into one folder that can be
# copied to a GPU machine which has the CUDA driver but none of this machine's Debian libraries
# (spdlog, OpenMPI, libpng, ...) and maybe another glibc:
#   BUNDLE/libexec/   the engine and the single-process gpu test binaries, stripped
#   BUNDLE/lib/       every shared library they load except the CUDA driver and NCCL, with
#                     glibc and its loader
#   BUNDLE/bin/arclight-engine, BUNDLE/tests/NAME
#                     wrappers that start the program through the carried loader, so it runs
#                     against the carried glibc whatever the machine has
# NCCL (218 MB) is not carried: the wrappers add the directory of the machine's own libnccl.so.2
# (the CUDA toolkit's, or Python's nvidia-nccl package) to the library path.
# The tests that need mpirun (nccl_communicator_test, tp_cuda_test) are left out; they also need
# two GPUs for their NCCL cases.
# Usage: tests/gpu/make-bundle.sh [BUILD_DIR] [BUNDLE_DIR]   (default build/default, build/gpu-bundle)
# Then, on the GPU machine: tests/gpu/run-suite.sh BUNDLE_DIR
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=$(cd "${1:-$ROOT/build/default}" && pwd)
BUNDLE=${2:-$ROOT/build/gpu-bundle}
PROGRAMS=(bin/arclight-engine tests/test_cuda_kernels tests/cuda_backend_test
  tests/cuda_candidates_test tests/vision_cuda_test)

for p in "${PROGRAMS[@]}"; do
  if [[ ! -x $BUILD/$p ]]; then
    echo "make-bundle: $BUILD/$p is not built (build the default preset with CUDA first)" >&2
    exit 2
  fi
done
rm -rf "$BUNDLE"
mkdir -p "$BUNDLE"/{bin,tests,libexec,lib}

# The shared libraries, resolved here; the CUDA driver and NCCL come from the GPU machine.
for p in "${PROGRAMS[@]}"; do
  ldd "$BUILD/$p" | awk '$3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'
done | sort -u | while read -r lib; do
  case $(basename "$lib") in
    libcuda.so* | libnccl.so* | libnvidia-*) continue ;;
  esac
  cp -L "$lib" "$BUNDLE/lib/$(basename "$lib")"
done
LOADER=$(ldd "$BUILD/bin/arclight-engine" | awk '$1 ~ /ld-linux/ {print $1}')
cp -L "$LOADER" "$BUNDLE/lib/$(basename "$LOADER")"

for p in "${PROGRAMS[@]}"; do
  name=$(basename "$p")
  cp "$BUILD/$p" "$BUNDLE/libexec/$name"
  strip --strip-unneeded "$BUNDLE/libexec/$name"
  cat >"$BUNDLE/$p" <<EOF
#!/bin/sh
# Runs $name (built on Debian 12) through the carried loader and libraries (make-bundle.sh).
d=\$(cd "\$(dirname "\$0")/.." && pwd)
nccl=""
for c in /usr/local/cuda/lib /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu; do
  [ -e "\$c/libnccl.so.2" ] && nccl="\$c" && break
done
if [ -z "\$nccl" ] && command -v python3 >/dev/null 2>&1; then
  nccl=\$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null || true)
fi
exec "\$d/lib/$(basename "$LOADER")" --library-path "\$d/lib\${nccl:+:\$nccl}\${ARC_EXTRA_LIB_PATH:+:\$ARC_EXTRA_LIB_PATH}" "\$d/libexec/$name" "\$@"
EOF
  chmod +x "$BUNDLE/$p"
done
echo "make-bundle: $(du -sh "$BUNDLE" | cut -f1) in $BUNDLE"
