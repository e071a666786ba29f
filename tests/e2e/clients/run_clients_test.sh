#!/usr/bin/env bash
# Installs the pinned client libraries (npm, cached in the build tree) and runs the test file
# (4th argument; default clients_test.mjs).
# Exit 77 (CTest: skipped) when Node.js/npm are missing or the npm registry cannot be reached.
set -u
src="$1"; work="$2"; engine="$3"; file="${4:-clients_test.mjs}"
command -v node >/dev/null && command -v npm >/dev/null || { echo "SKIP: node/npm not installed"; exit 77; }
mkdir -p "$work"
cp "$src/package.json" "$src/engine.mjs" "$src/$file" "$work/"
if [ ! -d "$work/node_modules/openai" ] || [ ! -d "$work/node_modules/@anthropic-ai/sdk" ]; then
  (cd "$work" && timeout 300 npm install --no-audit --no-fund --loglevel=error) ||
    { echo "SKIP: npm install failed (no registry?)"; exit 77; }
fi
cd "$work" && ARC_ENGINE="$engine" node --test "$file"
