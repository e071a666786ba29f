#!/usr/bin/env bash
# Regenerates the README's screenshots (docs/screenshots/*.png) from the built app under Xvfb:
# a small demo model is served by the built engine, the app attaches to it with a scratch
# configuration (the user's settings are not touched) and saves every page.
# Usage: packaging/screenshots.sh [BUILD_DIR] [OUT_DIR]   (defaults: build/default docs/screenshots)
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build/default}" && pwd)
out=$(mkdir -p "${2:-$src/docs/screenshots}" && cd "${2:-$src/docs/screenshots}" && pwd)
engine="$build/bin/arclight-engine"
app="$build/bin/arclight"
[[ -x "$engine" && -x "$app" ]] || {
  echo "screenshots: build the app and engine first (cmake --workflow --preset default)" >&2
  exit 1
}
command -v xvfb-run >/dev/null || {
  echo "screenshots: needs xvfb-run (apt install xvfb)" >&2
  exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/arc-shots.XXXXXX")
engine_pid=""
cleanup() {
  [[ -n "$engine_pid" ]] && kill "$engine_pid" 2>/dev/null && wait "$engine_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# A demo model with the real Qwen3 vocabulary when the fixtures are there, so chat looks like text.
model="$work/models/arclight-demo-qwen3moe.gguf"
mkdir -p "$work/models"
fixture_args=()
[[ -d "$src/../shared/fixtures" ]] && fixture_args=(--tokenizer-fixture qwen3 --fixtures-dir "$src/../shared/fixtures")
"$engine" make-test-model --family qwen3moe --layers 4 --hidden 256 --heads 4 --kv-heads 2 \
  --head-dim 64 --experts 8 --experts-used 2 --expert-ff 256 --type Q4_K_M \
  "${fixture_args[@]}" --out "$model" >/dev/null

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$engine" serve --host 127.0.0.1 --port "$port" --model "$model" --model-dir "$work/models" \
  --threads 2 -c 4096 >"$work/engine.log" 2>&1 &
engine_pid=$!
for _ in $(seq 1 300); do
  curl -s "http://127.0.0.1:$port/health" | grep -q '"ready"' && break
  sleep 0.1
done

export XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" XDG_CACHE_HOME="$work/cache"
export LANG=C.UTF-8 LC_ALL=C.UTF-8
xvfb-run -a -s "-screen 0 1400x900x24" "$app" --engine-url "http://127.0.0.1:$port" \
  --screenshots "$out"
ls -1 "$out"/*.png
