#!/usr/bin/env bash
# test_packages (ctest): builds the Debian packages from a configured, built tree and checks them
# the way a distribution would, without installing anything on this machine:
#   lintian (no errors), the contents of each package, the systemd unit (systemd-analyze verify
#   in a scratch root), the desktop entry and AppStream metainfo, the man pages, the service's
#   command line, and the packaged engine unpacked into a scratch folder answering /health.
# Usage: packaging/test-packages.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: test-packages.sh BUILD_DIR}" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/arc-pkg-test.XXXXXX")
engine_pid=""
cleanup() {
  [[ -n "$engine_pid" ]] && kill "$engine_pid" 2>/dev/null && wait "$engine_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

echo "== cpack"
(cd "$build" && cpack -B "$work/out" >"$work/cpack.log" 2>&1) || {
  cat "$work/cpack.log"
  fail "cpack could not build the packages"
}
engine_deb=$(ls "$work"/out/arclight-engine_*.deb 2>/dev/null | head -1)
app_deb=$(ls "$work"/out/arclight_*.deb 2>/dev/null | head -1)
[[ -f "$engine_deb" ]] || fail "no arclight-engine package"
with_app=0
grep -q "^ARC_WITH_GUI:.*=ON\|^ARC_WITH_GUI:.*=AUTO" "$build/CMakeCache.txt" && [[ -x "$build/bin/arclight" ]] &&
  with_app=1
if [[ $with_app == 1 ]]; then [[ -f "$app_deb" ]] || fail "the app is built but no arclight package"; fi

echo "== lintian"
# Errors fail the test; warnings are printed for a person to read.
lintian --tag-display-limit 0 --fail-on error "$engine_deb" ${app_deb:+"$app_deb"} 2>&1 |
  grep -v "running with root privileges" || true
lintian --tag-display-limit 0 --fail-on error "$engine_deb" ${app_deb:+"$app_deb"} >/dev/null 2>&1 ||
  fail "lintian reports errors (above)"

echo "== contents"
expect_files() {
  local deb=$1
  shift
  local listing
  listing=$(dpkg-deb -c "$deb" | awk '{print $6}')
  for f in "$@"; do
    grep -qx "\./$f" <<<"$listing" || fail "$(basename "$deb") lacks /$f"
  done
}
expect_files "$engine_deb" usr/bin/arclight-engine usr/lib/arclight/engine-service \
  usr/lib/systemd/system/arclight-engine.service usr/lib/sysusers.d/arclight-engine.conf \
  etc/arclight/engine.conf usr/share/man/man1/arclight-engine.1.gz \
  usr/share/arclight/catalog/models.json usr/share/doc/arclight-engine/copyright \
  usr/share/doc/arclight-engine/changelog.gz
dpkg-deb -I "$engine_deb" conffiles | grep -qx "/etc/arclight/engine.conf" ||
  fail "engine.conf is not a conffile"
dpkg-deb -f "$engine_deb" Depends | grep -q "libc6" || fail "engine Depends were not computed"
if [[ $with_app == 1 ]]; then
  expect_files "$app_deb" usr/bin/arclight usr/share/applications/org.arclight.Arclight.desktop \
    usr/share/metainfo/org.arclight.Arclight.metainfo.xml \
    usr/share/icons/hicolor/scalable/apps/org.arclight.Arclight.svg \
    usr/share/icons/hicolor/48x48/apps/org.arclight.Arclight.png \
    usr/share/icons/hicolor/256x256/apps/org.arclight.Arclight.png \
    usr/share/man/man1/arclight.1.gz usr/share/doc/arclight/copyright
  dpkg-deb -f "$app_deb" Depends | grep -q "arclight-engine (=" || fail "the app does not depend on the engine"
  dpkg-deb -f "$app_deb" Depends | grep -q "libqt6widgets6" || fail "app Depends were not computed"
fi

root="$work/root"
mkdir -p "$root"
dpkg-deb -x "$engine_deb" "$root"
[[ $with_app == 1 ]] && dpkg-deb -x "$app_deb" "$root"

echo "== systemd unit"
# A scratch root with the package and the system's own units (the targets the unit names).
mkdir -p "$root/usr/lib/systemd/system" "$root/etc"
cp -rn /lib/systemd/system/. "$root/usr/lib/systemd/system/" 2>/dev/null || true
cp /etc/passwd /etc/group "$root/etc/"
verify=$(systemd-analyze verify --man=no --root="$root" \
  /usr/lib/systemd/system/arclight-engine.service 2>&1) || fail "systemd-analyze verify: $verify"
# It exits 0 on directives it ignores: any message is a defect.
[[ -z "$verify" ]] || fail "systemd-analyze verify: $verify"
for key in NoNewPrivileges=yes ProtectHome=yes ProtectSystem=strict PrivateTmp=yes \
  Restart=on-failure User=arclight EnvironmentFile=/etc/arclight/engine.conf \
  "DeviceAllow=char-nvidia-frontend rw"; do
  grep -qx "$key" "$root/usr/lib/systemd/system/arclight-engine.service" || fail "unit lacks $key"
done

echo "== service command line"
# The wrapper turns engine.conf into arguments; a stand-in engine and mpirun print them.
mkdir -p "$work/fakebin"
printf '#!/bin/sh\necho "$@"\n' >"$work/fakebin/engine"
printf '#!/bin/sh\necho mpirun "$@"\n' >"$work/fakebin/mpirun"
chmod +x "$work/fakebin/engine" "$work/fakebin/mpirun"
args=$(env -i PATH="$work/fakebin:/usr/bin:/bin" ARC_ENGINE="$work/fakebin/engine" \
  bash -c "set -a; . '$root/etc/arclight/engine.conf'; ARC_MODEL=m.gguf; ARC_API_KEY_FILE=/k; \
           exec '$root/usr/lib/arclight/engine-service'")
for want in "serve" "--host 127.0.0.1" "--port 8080" "--backend cuda" "--model-dir /var/lib/arclight/models" \
  "--model /var/lib/arclight/models/m.gguf" "--api-key-file /k"; do
  grep -q -- "$want" <<<"$args" || fail "service command line lacks '$want': $args"
done
args=$(env -i PATH="$work/fakebin:/usr/bin:/bin" ARC_ENGINE="$work/fakebin/engine" \
  bash -c "set -a; . '$root/etc/arclight/engine.conf'; ARC_HOSTFILE=/etc/arclight/hosts; ARC_RANKS=3; \
           exec '$root/usr/lib/arclight/engine-service'")
grep -q -- "^mpirun --hostfile /etc/arclight/hosts -np 3 .* serve .* --tp 3$" <<<"$args" ||
  fail "tensor-parallel service command line: $args"

echo "== desktop entry, metainfo, man pages"
if [[ $with_app == 1 ]]; then
  desktop-file-validate "$root/usr/share/applications/org.arclight.Arclight.desktop" ||
    fail "desktop-file-validate"
  appstreamcli validate --no-net "$root/usr/share/metainfo/org.arclight.Arclight.metainfo.xml" ||
    fail "appstreamcli validate"
fi
for page in "$root"/usr/share/man/man1/*.1.gz; do
  warnings=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$page" 2>&1 >/dev/null || true)
  [[ -z "$warnings" ]] || fail "$(basename "$page"): $warnings"
done
page=$(MANWIDTH=200 man -l "$root/usr/share/man/man1/arclight-engine.1.gz" 2>/dev/null)
# Generated from the CLI: every subcommand and a sample of options are there.
for want in "ARCLIGHT-ENGINE SERVE" "ARCLIGHT-ENGINE BENCH" "ARCLIGHT-ENGINE FIT" "--api-key-file" \
  "--model-dir" "--tp"; do
  grep -q -- "$want" <<<"$page" || fail "man page lacks '$want'"
done

echo "== the packaged engine, unpacked, answers /health"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$root/usr/bin/arclight-engine" --version | grep -q "arclight-engine" || fail "engine --version"
"$root/usr/bin/arclight-engine" serve --host 127.0.0.1 --port "$port" --backend cpu --threads 1 \
  >"$work/engine.log" 2>&1 &
engine_pid=$!
for _ in $(seq 1 100); do
  health=$(curl -s "http://127.0.0.1:$port/health" || true)
  [[ -n "$health" ]] && break
  kill -0 "$engine_pid" 2>/dev/null || break
  sleep 0.1
done
grep -q '"status"' <<<"$health" || {
  cat "$work/engine.log"
  fail "no /health answer from the packaged engine: '$health'"
}
echo "health: $health"
echo "PASS: $(basename "$engine_deb") ${app_deb:+$(basename "$app_deb")}"
