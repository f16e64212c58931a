#!/usr/bin/env bash
# Multi-Node smoke run of the packed package (issue 6, "Package correctness"):
#
#   scripts/consumer/multi-node.sh [tarball]
#
# The quickstart (examples/quickstart.ts + examples/connect.ts: the main operations once each against the
# embedded fake seeded with 5 agents, 500 customer users, 60 conversations, 10,000 messages) runs
# from the tarball on each Node line the package claims, plus a CommonJS load of both entries:
#
#   floor   the lowest version package.json `engines` allows (">=22.19" -> 22.19.0)
#   24      the newest 24.x on the npm registry
#   26      the newest 26.x on the npm registry
#
# MULTI_NODE_VERSIONS overrides the list (words: floor, a major such as 22 for its newest
# release, or an exact x.y.z), e.g. MULTI_NODE_VERSIONS="22 24 26" for the newest 22 instead of
# the floor.
#
# Node binaries come from the npm registry's `node` package (`npm install node@X.Y.Z`: its
# preinstall fetches the platform package node-<os>-<arch>; the binary ends up at
# node_modules/node/bin/node). They are cached per exact version under
# ${CHAT_SERVICE_SDK_NODE_CACHE:-$TMPDIR/chat-service-sdk-node-cache}/<version>/ (about 170 MB
# each), checked with `node -v` before use and fetched again when missing or broken; missing ones
# are fetched in parallel.
#
# How the examples run: without a tarball the working tree is built and packed. One temporary
# project (made and installed on the project's Node 24, engine-strict) installs ONLY the tarball,
# and gets copies of examples/quickstart.ts and examples/connect.ts, which import
# `chat-service-sdk` and `chat-service-sdk/testing` by name, so they load the installed tarball.
# They are TypeScript: each binary runs them directly when it strips types by default
# (`process.features.typescript`; true of 22.18 and later, so of 22.19, 24 and 26: checked on the
# actual binary, printed). A binary without type stripping would get quickstart.mjs instead,
# bundled from the two files by the project's esbuild (a tsup dependency: `npx esbuild`, with
# packages kept external so the SDK still comes from the tarball); MULTI_NODE_COMPILE=1 forces
# that path.
#
# Each version passes when the quickstart exits 0 and prints "agents: 5 ", "customer users: 500",
# "conversations: 60", "messages: 10000" and "Using the embedded fake service" (and no key
# secret), `require()` of both entries works, and the `chat-service` bin (as npm linked it) prints
# the fake's 5 agents (chat-service-fake on a free port). Prints "multi-node: node vX.Y.Z: ok (N s)" per
# version, the time of each part, and last "multi-node: N passed, N failed"; exit 1 on any failure.
set -euo pipefail
PREFIX=multi-node
# shellcheck source=scripts/consumer/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VERSIONS_SPEC=${MULTI_NODE_VERSIONS:-floor 24 26}
NODE_CACHE=${CHAT_SERVICE_SDK_NODE_CACHE:-${TMPDIR:-/tmp}/chat-service-sdk-node-cache}

started=$(now_ms)
make_workdir
setup_node
get_tarball "${1:-}"

# --- which versions -------------------------------------------------------------------------
t0=$(now_ms)
npm view node versions --json >"$WORK/node-versions.json" 2>"$WORK/node-versions.err" ||
  die "npm view node versions failed: $(cat "$WORK/node-versions.err")"
ENGINES=$(node -p 'JSON.parse(process.argv[1]).engines?.node ?? ""' "$TARBALL_PKG")
# One line per word of VERSIONS_SPEC: "<version> <why>".
node -e '
  const fs = require("node:fs")
  const [file, engines, ...words] = process.argv.slice(1)
  const stable = JSON.parse(fs.readFileSync(file, "utf8")).filter((v) => /^\d+\.\d+\.\d+$/.test(v))
  const cmp = (a, b) => { const x = a.split(".").map(Number), y = b.split(".").map(Number); return x[0] - y[0] || x[1] - y[1] || x[2] - y[2] }
  const newest = (major) => stable.filter((v) => v.split(".")[0] === major).sort(cmp).at(-1)
  for (const word of words) {
    let version, why
    if (word === "floor") {
      const m = /^>=\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(engines.trim())
      if (!m) throw new Error(`engines.node is "${engines}": cannot tell its floor; set MULTI_NODE_VERSIONS`)
      version = `${m[1]}.${m[2] ?? 0}.${m[3] ?? 0}`
      why = `the engines floor (${engines})`
    } else if (/^\d+$/.test(word)) {
      version = newest(word)
      why = `the newest ${word}.x`
    } else {
      version = word.replace(/^v/, "")
      why = "as asked"
    }
    if (!version || !stable.includes(version)) throw new Error(`no node package version for "${word}" on the registry`)
    console.log(`${version} ${why}`)
  }
' "$WORK/node-versions.json" "$ENGINES" $VERSIONS_SPEC >"$WORK/versions.txt" || die "cannot resolve the Node versions"
VERSIONS=()
while read -r version why; do
  VERSIONS+=("$version")
  echo "$PREFIX: node $version: $why"
done <"$WORK/versions.txt"
echo "$PREFIX: resolved versions ($(secs_since "$t0"))"

# --- node binaries ----------------------------------------------------------------------------
mkdir -p "$NODE_CACHE"
# An interrupted run leaves no half-installed binary behind: fetches go to .staging-<version>.<pid>.
CLEANUP_HOOKS+=('rm -rf "$NODE_CACHE"/.staging-*."$$" "$NODE_CACHE"/.staging-*."$$".log')

cached_node() { echo "$NODE_CACHE/$1/node_modules/node/bin/node"; }

node_ok() { # node_ok VERSION: the cached binary exists and is that version
  local bin
  bin=$(cached_node "$1")
  [ -x "$bin" ] && [ "$("$bin" -v 2>/dev/null)" = "v$1" ]
}

fetch_node() { # fetch_node VERSION: installs node@VERSION into the cache (in a staging dir first)
  local version=$1 staging=$NODE_CACHE/.staging-$version.$$
  rm -rf "$staging" && mkdir "$staging"
  if ! npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$staging" "node@$version" >"$staging.log" 2>&1; then
    cat "$staging.log"
    rm -rf "$staging" "$staging.log"
    return 1
  fi
  if [ "$("$staging/node_modules/node/bin/node" -v 2>/dev/null)" != "v$version" ]; then
    echo "npm installed node@$version but $staging/node_modules/node/bin/node does not run as v$version" \
      "(did npm skip the package's preinstall script, which fetches the binary?)"
    cat "$staging.log"
    rm -rf "$staging" "$staging.log"
    return 1
  fi
  rm -rf "$NODE_CACHE/$version"
  # A concurrent run may have won the race: then its copy is as good as ours.
  mv -T "$staging" "$NODE_CACHE/$version" 2>/dev/null || rm -rf "$staging"
  rm -f "$staging.log"
  node_ok "$version"
}

t0=$(now_ms)
pids=()
fetched=()
for version in "${VERSIONS[@]}"; do
  if node_ok "$version"; then continue; fi
  fetched+=("$version")
  fetch_node "$version" >"$WORK/fetch-$version.log" 2>&1 &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || {
    cat "$WORK/fetch-${fetched[$i]}.log"
    die "could not get node ${fetched[$i]} from the npm registry's node package"
  }
done
if [ "${#fetched[@]}" -gt 0 ]; then
  echo "$PREFIX: fetched node ${fetched[*]} into $NODE_CACHE ($(secs_since "$t0"))"
else
  echo "$PREFIX: all node binaries cached in $NODE_CACHE ($(secs_since "$t0"))"
fi

# --- the consumer project ---------------------------------------------------------------------
t0=$(now_ms)
PROJECT=$WORK/quickstart
new_project quickstart module >"$WORK/project.log" 2>&1
npm_install "$PROJECT" "$TARBALL" >>"$WORK/project.log" 2>&1 || {
  cat "$WORK/project.log"
  die "installing the tarball failed"
}
cp "$ROOT/examples/quickstart.ts" "$ROOT/examples/connect.ts" "$PROJECT/"
echo "$PREFIX: project with only the tarball installed ($(secs_since "$t0"))"

compile_examples() { # bundles quickstart.ts + connect.ts into quickstart.mjs (once)
  [ -f "$PROJECT/quickstart.mjs" ] && return 0
  echo "+ esbuild quickstart.ts -> quickstart.mjs"
  (cd "$ROOT" && npx --no -- esbuild "$PROJECT/quickstart.ts" --bundle --platform=node --format=esm \
    --packages=external --target=node22 --outfile="$PROJECT/quickstart.mjs")
}

check_version() { # check_version NAME VERSION
  local version=$2 bin strip entry out=$WORK/quickstart-$2.txt expected
  bin=$(cached_node "$version")
  "$bin" -v
  strip=$("$bin" -p 'process.features.typescript ?? false')
  echo "type stripping on node $version: $strip"
  if [ "$strip" != false ] && [ "${MULTI_NODE_COMPILE:-0}" != 1 ]; then
    entry=quickstart.ts
  else
    compile_examples
    entry=quickstart.mjs
  fi
  echo "+ node $entry (node $version)"
  (cd "$PROJECT" && "$bin" "$entry") >"$out"
  cat "$out"
  for expected in 'agents: 5 ' 'customer users: 500$' 'conversations: 60$' 'messages: 10000 ' 'Using the embedded fake service'; do
    grep -q "$expected" "$out" || {
      echo "the quickstart's output lacks '$expected'"
      return 1
    }
  done
  if grep -q 'sk_test_' "$out"; then
    echo 'the quickstart printed the key secret'
    return 1
  fi
  echo "+ require() of both entries (node $version)"
  (cd "$PROJECT" && "$bin" -e '
    const sdk = require("chat-service-sdk"), testing = require("chat-service-sdk/testing")
    if (typeof sdk.ChatServiceClient !== "function" || typeof testing.createFakeChatService !== "function") throw new Error("missing exports")
    if (!require.resolve("chat-service-sdk").endsWith("/dist/index.cjs")) throw new Error("require resolved " + require.resolve("chat-service-sdk"))
    console.log("require: ok, VERSION", sdk.VERSION)
  ')
  check_command "$bin" "$version"
}

check_command() { # check_command NODE VERSION: the chat-service bin, as npm linked it, against chat-service-fake
  local bin=$1 version=$2 fake_json=$WORK/fake-$2.json fake agents
  echo "+ node_modules/.bin/chat-service --version, agents list (node $version)"
  (cd "$PROJECT" && "$bin" node_modules/.bin/chat-service --version)
  (cd "$PROJECT" && exec "$bin" node_modules/.bin/chat-service-fake --port 0 --json) >"$fake_json" &
  fake=$!
  for _ in $(seq 100); do [ -s "$fake_json" ] && break; sleep 0.1; done
  agents=$(cd "$PROJECT" && eval "$("$bin" -e '
    const o = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))
    console.log(`export CHAT_SERVICE_BASE_URL=${o.baseUrl} CHAT_SERVICE_KEY_ID=${o.keyId} CHAT_SERVICE_KEY_SECRET=${o.keySecret}`)
  ' "$fake_json")" && "$bin" node_modules/.bin/chat-service agents list | wc -l) || agents=failed
  kill "$fake" 2>/dev/null || true
  wait "$fake" 2>/dev/null || true
  echo "chat-service agents list: $agents lines"
  [ "$agents" = 5 ] || {
    echo "chat-service agents list printed $agents lines, expected the fake's 5 agents"
    return 1
  }
}

echo "$PREFIX: entry files: $(cd "$PROJECT" && ls quickstart.ts connect.ts | tr '\n' ' ')(from examples/)"
for version in "${VERSIONS[@]}"; do
  run_check "node v$version" check_version "$version"
done

print_summary "$started"
