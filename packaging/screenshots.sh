#!/usr/bin/env bash
# Screenshots of every page in the light and the dark theme, from the built app under Xvfb: a
# small demo model is served by the built engine, the app attaches to it with a scratch
# configuration (the user's settings and data are not touched) and saves every page.
# The scratch data gives each page something to show: a conversation with a table, a quote and
# code (Chat), chat requests sent while the app runs (Monitor), a bench-serve run against the demo
# engine (Benchmark), a hostfile (Cluster).
# Usage: packaging/screenshots.sh [BUILD_DIR] [OUT_DIR]   (defaults: build/default BUILD_DIR/screenshots)
# Writes OUT_DIR/light/{models,chat,monitor,benchmark,cluster}.png and the same under OUT_DIR/dark.
# Set ARC_SHOTS_LANG=de for the German app.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build/default}" && pwd)
out=$(mkdir -p "${2:-$build/screenshots}" && cd "${2:-$build/screenshots}" && pwd)
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
load_pid=""
cleanup() {
  [[ -n "$load_pid" ]] && kill "$load_pid" 2>/dev/null && wait "$load_pid" 2>/dev/null
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
url="http://127.0.0.1:$port"
"$engine" serve --host 127.0.0.1 --port "$port" --model "$model" --model-dir "$work/models" \
  --threads 2 -c 4096 >"$work/engine.log" 2>&1 &
engine_pid=$!
for _ in $(seq 1 300); do
  curl -s "$url/health" | grep -q '"ready"' && break
  sleep 0.1
done

export XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" XDG_CACHE_HOME="$work/cache"
export LANG=C.UTF-8 LC_ALL=C.UTF-8
data="$XDG_DATA_HOME/Arclight/arclight"
mkdir -p "$data/conversations" "$XDG_CONFIG_HOME/Arclight"

# Benchmark: one short bench-serve run against the demo engine, kept as the app keeps its runs.
"$engine" bench-serve --url "$url" --json --profile custom --prompts prose,json --concurrency 1,2 \
  --runs 2 --max-tokens 48 --long-prompt-tokens 1024 >"$work/bench.jsonl" 2>"$work/bench.log" || true
python3 - "$work/bench.jsonl" "$data/benchmarks.json" "$url" <<'PY'
import json, sys, datetime
results = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
results = [r for r in results if "scenario" in r]
now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
run = {"id": now.isoformat(), "date": now.isoformat().replace("+00:00", "Z"),
       "model": results[0].get("model", "") if results else "", "build": "",
       "settings": {"url": sys.argv[3], "profile": "custom", "prompts": ["prose", "json"],
                    "concurrency": [1, 2], "runs": 2, "max_tokens": 48, "long_prompt_tokens": 1024},
       "results": results}
json.dump({"version": 1, "runs": [run] if results else []}, open(sys.argv[2], "w"), indent=1)
PY

# Chat: a conversation whose answer shows a table, a quote, a list and code.
python3 - "$data/conversations" <<'PY'
import json, sys, datetime
now = datetime.datetime.now(datetime.timezone.utc)
answer = ("Here is how the two builds compare on one box:\n\n"
          "| build | weights | decode tok/s |\n|---|---:|---:|\n| Q4_K_M | 17.3 GiB | 41.5 |\n"
          "| Q8_0 | 30.2 GiB | 24.0 |\n\n"
          "> Decode speed is bounded by memory bandwidth: fewer bytes per token, more tokens.\n\n"
          "- Q4_K_M leaves room for a long context\n- Q8_0 stays closer to the reference\n\n"
          "```python\ndef tokens_per_second(bandwidth_gbs, active_gb):\n"
          "    return bandwidth_gbs / active_gb  # an upper bound\n```\n")
conv = {"version": 1, "id": "demo-conversation", "title": "Which quant for one box?",
        "system_prompt": "", "updated": now.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "sampling": {"temperature": 0.7, "top_p": 0.9, "top_k": 40, "max_tokens": 2048},
        "messages": [
            {"role": "user", "content": "Compare Q4_K_M and Q8_0 for this model on one box.",
             "status": "complete"},
            {"role": "assistant", "content": answer, "status": "complete",
             "reasoning": "The user wants a comparison table.",
             "stats": {"ttft_ms": 310, "decode_tokens_per_s": 41.5, "prefill_tokens_per_s": 880,
                       "total_ms": 2900, "prompt_tokens": 25, "completion_tokens": 118,
                       "cached_tokens": 16}}]}
json.dump(conv, open(sys.argv[1] + "/demo-conversation.json", "w"), indent=1)
older = dict(conv, id="older-conversation", title="Hostfile for two Sparks",
             updated=(now - datetime.timedelta(days=3)).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
             messages=conv["messages"][:1])
json.dump(older, open(sys.argv[1] + "/older-conversation.json", "w"), indent=1)
PY
printf 'spark-a slots=1\nspark-b slots=1\n' >"$data/hostfile"

# Monitor: chat requests while the app runs, so its charts have points.
send_requests() {
  for i in $(seq 1 40); do
    curl -s -o /dev/null "$url/v1/chat/completions" -H 'Content-Type: application/json' \
      -d "{\"messages\":[{\"role\":\"user\",\"content\":\"Count to $i.\"}],\"max_tokens\":$((16 + i % 5 * 8))}" || true
    sleep 0.2
  done
}

for theme in light dark; do
  mkdir -p "$out/$theme"
  # QSettings' ini form of AppSettings: ui/theme 1 light, 2 dark.
  cat >"$XDG_CONFIG_HOME/Arclight/arclight.conf" <<CONF
[engine]
hostfile=$data/hostfile
ranks=2
[ui]
theme=$([[ $theme == light ]] && echo 1 || echo 2)
language=${ARC_SHOTS_LANG:-en}
CONF
  send_requests &
  load_pid=$!
  xvfb-run -a -s "-screen 0 1400x900x24" "$app" --engine-url "$url" --screenshots "$out/$theme"
  kill "$load_pid" 2>/dev/null || true
  wait "$load_pid" 2>/dev/null || true
  load_pid=""
done
ls -1 "$out"/light/*.png "$out"/dark/*.png
