#!/usr/bin/env bash
# Installs the Debian 12 packages Arclight needs to build, run and test.
# Idempotent: when everything is present it only checks and returns (about a second).
#   packaging/setup-deps.sh            build + test dependencies (default)
#   packaging/setup-deps.sh --runtime  only what the app and engine need to run
set -euo pipefail

BUILD_PKGS=(
  build-essential cmake ninja-build ccache pkg-config git clang clang-format
  qt6-base-dev qt6-base-dev-tools qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools
  libqt6svg6-dev libgl-dev
  libqcustomplot-dev libqcustomplot2.1-qt6
  # The Hugging Face token in the desktop keyring (Secret Service / KWallet).
  qtkeychain-qt6-dev
  libspdlog-dev libfmt-dev nlohmann-json3-dev libcpp-httplib-dev libssl-dev zlib1g-dev
  libpcre2-dev libutf8proc-dev libcli11-dev
  libopenmpi-dev openmpi-bin libibverbs-dev librdmacm-dev ibverbs-utils
  libpng-dev libjpeg62-turbo-dev libwebp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # The CUDA emulator (kernels/cuda_emu): each CUDA thread a Boost.Context fiber.
  libboost-context-dev
)
TEST_PKGS=(
  prometheus xvfb xauth fonts-dejavu-core
  # An independent JSON Schema validator for the structured-output test.
  python3 python3-jsonschema
  # aarch64 (DGX Spark's Grace CPU): the NEON kernels are cross-compiled and their tests run
  # under user-mode emulation (test_kernels_aarch64); googletest's sources are built for it.
  g++-aarch64-linux-gnu qemu-user-static googletest
  # The Debian packages (test_packages): checked as a distribution would.
  lintian desktop-file-utils appstream systemd man-db curl python3
)
# Node.js and npm (for the official OpenAI/Anthropic client tests) may come from Debian or
# from NodeSource; only install Debian's when no node is on the PATH.
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || TEST_PKGS+=(nodejs npm)

pkgs=("${BUILD_PKGS[@]}" "${TEST_PKGS[@]}")
missing=()
for p in "${pkgs[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup-deps: all ${#pkgs[@]} packages present"
  exit 0
fi

echo "setup-deps: missing: ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "setup-deps: not root and no sudo; install the packages above as root:" >&2
    echo "  apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup-deps: installed ${#missing[@]} packages"
