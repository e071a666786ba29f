#!/usr/bin/env bash
# Renders the app icon (resources/icons/arclight.svg) into the PNG sizes of the hicolor theme
# under packaging/icons/. The PNGs are committed; run this after changing the SVG
# (needs rsvg-convert: apt install librsvg2-bin).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
svg="$here/../resources/icons/arclight.svg"
for size in 16 24 32 48 64 128 256 512; do
  out="$here/icons/hicolor/${size}x${size}/apps"
  mkdir -p "$out"
  rsvg-convert -w "$size" -h "$size" "$svg" -o "$out/org.arclight.Arclight.png"
done
echo "icons written under $here/icons/hicolor"
