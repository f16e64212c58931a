#!/usr/bin/env bash
# Start-up time of the `chat-service` bin (the figures in docs/command.md, "Start-up"):
# hyperfine (Debian: apt-get install hyperfine) runs, 30 times each after 3 warm-ups:
#   node -e 0                    Node.js itself, the floor
#   chat-service --version       the bin without the SDK (help and --version never load it)
#   chat-service agents list     the bin, the SDK (undici, zod) and one request to the fake on loopback
#   the same, compile cache off  NODE_DISABLE_COMPILE_CACHE=1: what the bin's enableCompileCache() saves
# on the project's Node (npm exec node), from a fresh build, against `chat-service-fake` on a free port.
#
#   npm run bench:cli        (or: bash scripts/cli-startup.sh [RUNS])
# A figure, not a gate: timing on a shared machine is noisy; hyperfine prints the spread.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30}
command -v hyperfine >/dev/null || { echo "hyperfine is not installed (Debian: apt-get install hyperfine)"; exit 1; }
node=$(npm exec -- node -p process.execPath)
npx tsup --silent --no-dts
work=$(mktemp -d)
trap 'kill "$fake" 2>/dev/null || true; rm -rf "$work"' EXIT
"$node" dist/testing/cli.js --port 0 --json --agents 5 >"$work/fake.json" &
fake=$!
for _ in $(seq 100); do [ -s "$work/fake.json" ] && break; sleep 0.1; done
eval "$("$node" -e '
  const o = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(`export CHAT_SERVICE_BASE_URL=${o.baseUrl} CHAT_SERVICE_KEY_ID=${o.keyId} CHAT_SERVICE_KEY_SECRET=${o.keySecret}`)
' "$work/fake.json")"
bin=dist/cli/index.cjs
echo "Node $("$node" --version), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine -N --warmup 3 --runs "$runs" --export-markdown "$work/startup.md" \
  -n 'node -e 0' "$node -e 0" \
  -n 'chat-service --version' "$node $bin --version" \
  -n 'chat-service agents list' "$node $bin agents list --max-items 1" \
  -n 'chat-service agents list, compile cache off' "env NODE_DISABLE_COMPILE_CACHE=1 $node $bin agents list --max-items 1"
cat "$work/startup.md"
