#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build libprintk and run the demo (the main job).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bash "$top/scripts/setup.sh"
cmake -S "$top" -B "$top/build/demo" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPRINTK_BUILD_TESTS=OFF >/dev/null
cmake --build "$top/build/demo" -j"$(nproc)" --target boot-demo >/dev/null
exec "$top/build/demo/examples/boot-demo" "$@"
