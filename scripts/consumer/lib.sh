# shellcheck shell=bash
# Shared by scripts/consumer/run.sh and scripts/consumer/multi-node.sh (sourced, never run).
#
# Conventions:
# - The caller sets PREFIX (the first word of every line it prints: "consumer", "multi-node") and
#   `set -euo pipefail` before sourcing.
# - make_workdir: one temporary directory, $WORK, removed on exit (also on Ctrl-C / TERM, after
#   stopping this script's background jobs and running any CLEANUP_HOOKS).
# - setup_node: $NODE is the project's pinned Node (the `node` devDependency, Node 24; this
#   machine's own node is 20). Its directory goes first on PATH, so npm, npx, tsc and every
#   temporary project run on it. CONSUMER_NODE=/path/to/node overrides it.
# - get_tarball [file]: $TARBALL is the given tarball, or the working tree built (`npm run
#   build`) and packed (`npm pack`) into $WORK.
# - new_project NAME TYPE: an empty npm project $WORK/NAME whose package.json names the Node it
#   runs on (engines, exact version) and whose .npmrc has engine-strict, so installing a tarball
#   whose `engines` excludes that Node fails.
# - run_check NAME FUNCTION (now) or start_check NAME FUNCTION + finish_checks (in parallel):
#   runs FUNCTION in a subshell with `set -e`, output to $WORK/NAME.log, then prints
#   "PREFIX: NAME: ok (N s)" or "PREFIX: NAME: FAILED ..." followed by the end of the log
#   (the whole log with CONSUMER_VERBOSE=1).
#   print_summary prints "PREFIX: N passed, N failed" as the last line and returns non-zero when
#   anything failed.

CONSUMER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$CONSUMER_DIR/../.." && pwd)
FIXTURES=$CONSUMER_DIR/fixtures

# Nothing from the caller's environment may steer module resolution, Node flags or the examples.
unset NODE_PATH NODE_OPTIONS CHAT_SERVICE_BASE_URL CHAT_SERVICE_KEY_ID CHAT_SERVICE_KEY_SECRET CHAT_SERVICE_LOG

now_ms() { date +%s%3N; }
# seconds since a now_ms value, as "12.3 s"
secs_since() {
  local ms=$(($(now_ms) - $1))
  printf '%d.%d s' $((ms / 1000)) $((ms % 1000 / 100))
}

# die MESSAGE: a failure outside any check (Node, build, pack, downloads): still ends with the
# summary line, counting itself as one failure.
die() {
  echo "$PREFIX: error: $*"
  echo "$PREFIX: ${PASSED:-0} passed, $((${FAILED:-0} + 1)) failed"
  exit 1
}

# descendants PID: the process ids below PID (children first listed after their parent).
descendants() {
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do
    echo "$child"
    descendants "$child"
  done
}

# Extra cleanup commands a script registers (run before $WORK is removed).
CLEANUP_HOOKS=()
on_exit() {
  local pids pid hook i
  # On an early exit (failure, Ctrl-C, TERM), stop this script's own background work (npm, tsc,
  # node) and let it finish dying before its files are removed.
  pids=$(descendants $$)
  if [ -n "$pids" ]; then
    for pid in $pids; do kill "$pid" 2>/dev/null || true; done
    for i in $(seq 50); do
      kill -0 $pids 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 $pids 2>/dev/null; then
      kill -KILL $pids 2>/dev/null || true
      sleep 0.5
    fi
  fi
  for hook in "${CLEANUP_HOOKS[@]}"; do eval "$hook" || true; done
  rm -rf "$WORK" 2>/dev/null || { sleep 1; rm -rf "$WORK"; }
}

make_workdir() {
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/chat-service-sdk-$PREFIX.XXXXXX")
  trap on_exit EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

setup_node() {
  if [ -n "${CONSUMER_NODE:-}" ]; then
    NODE=$CONSUMER_NODE
  else
    NODE=$(cd "$ROOT" && npm exec --no -- node -p process.execPath 2>/dev/null) || true
  fi
  [ -n "$NODE" ] && [ -x "$NODE" ] || die "cannot find the project's Node (run npm install in $ROOT first, or set CONSUMER_NODE)"
  "$NODE" -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 22 ? 0 : 1)' ||
    die "$NODE is Node $("$NODE" -v); the tools need Node 22 or later (run npm install in $ROOT: it pins node@24)"
  NODE_VERSION=$("$NODE" -v)
  PATH="$(dirname "$NODE"):$PATH"
  export PATH
  echo "$PREFIX: tools and temporary projects run on node $NODE_VERSION ($NODE), npm $(npm -v 2>/dev/null)"
}

get_tarball() {
  local given=${1:-} t0 name
  if [ -n "$given" ]; then
    [ -f "$given" ] || die "no such tarball: $given"
    TARBALL=$(cd "$(dirname "$given")" && pwd)/$(basename "$given")
  else
    t0=$(now_ms)
    (cd "$ROOT" && npm run -s build) >"$WORK/build.log" 2>&1 || {
      cat "$WORK/build.log"
      die "npm run build failed"
    }
    (cd "$ROOT" && npm pack --pack-destination "$WORK" --json) >"$WORK/pack.json" 2>"$WORK/pack.err" || {
      cat "$WORK/pack.err"
      die "npm pack failed"
    }
    name=$(node -p 'require(process.argv[1])[0].filename' "$WORK/pack.json")
    TARBALL=$WORK/$name
    echo "$PREFIX: built and packed $name ($(secs_since "$t0"))"
  fi
  TARBALL_PKG=$(tar -xOzf "$TARBALL" package/package.json) || die "$TARBALL has no package/package.json: not an npm tarball"
  TARBALL_ID=$(node -p 'const p = JSON.parse(process.argv[1]); p.name + "@" + p.version' "$TARBALL_PKG")
  echo "$PREFIX: testing $TARBALL_ID from $TARBALL"
}

# new_project NAME TYPE (TYPE: module, commonjs, or "" for no "type" field)
new_project() {
  local dir=$WORK/$1 type=${2:-}
  mkdir "$dir"
  node -e '
    const [name, type, nodeVersion] = process.argv.slice(1)
    const pkg = { name: "consumer-" + name, private: true }
    if (type) pkg.type = type
    pkg.engines = { node: nodeVersion.replace(/^v/, "") }
    require("node:fs").writeFileSync(process.argv[4] + "/package.json", JSON.stringify(pkg, null, 2) + "\n")
  ' "$1" "$type" "$NODE_VERSION" "$dir"
  printf 'engine-strict=true\naudit=false\nfund=false\nupdate-notifier=false\n' >"$dir/.npmrc"
  echo "+ new project $dir ($(tr -d '\n ' <"$dir/package.json"))"
}

# npm_install DIR SPEC...: installs exactly SPEC... into the project DIR.
npm_install() {
  local dir=$1
  shift
  echo "+ npm install $* (in $dir)"
  (cd "$dir" && npm install --no-audit --no-fund "$@")
  (cd "$dir" && npm ls --depth=0) || true
}

PASSED=0
FAILED=0
FAILED_NAMES=()

# run_check NAME FUNCTION [ARGS...]: runs one check now and reports it.
run_check() {
  local name=$1 fn=$2 t0 rc
  shift 2
  t0=$(now_ms)
  set +e
  (
    set -e
    "$fn" "$name" "$@"
  ) >"$WORK/$name.log" 2>&1
  rc=$?
  set -e
  report_check "$name" "$rc" $(($(now_ms) - t0))
}

# start_check NAME FUNCTION [ARGS...]: runs a check in the background, at most $CHECK_JOBS at a
# time (CONSUMER_JOBS, default 4: npm installs mostly wait on the network and disk, tsc takes a
# core; on 2 cores 4 jobs beat 3 by about a quarter);
# finish_checks waits for all of them and reports them in the order they were started.
CHECK_JOBS=${CONSUMER_JOBS:-4}
STARTED_CHECKS=()
start_check() {
  local name=$1 fn=$2
  shift 2
  while [ "$(jobs -rp | wc -l)" -ge "$CHECK_JOBS" ]; do wait -n || true; done
  STARTED_CHECKS+=("$name")
  (
    t0=$(now_ms)
    set +e
    (
      set -e
      "$fn" "$name" "$@"
    ) >"$WORK/$name.log" 2>&1
    echo "$? $(($(now_ms) - t0))" >"$WORK/$name.result"
  ) &
}

finish_checks() {
  local name rc ms
  wait || true
  for name in "${STARTED_CHECKS[@]}"; do
    rc=1 ms=0
    if [ -f "$WORK/$name.result" ]; then read -r rc ms <"$WORK/$name.result"; fi
    report_check "$name" "$rc" "$ms"
  done
}

# report_check NAME EXIT_STATUS MILLISECONDS
report_check() {
  local name=$1 rc=$2 ms=$3 log=$WORK/$1.log took
  took=$(printf '%d.%d s' $((ms / 1000)) $((ms % 1000 / 100)))
  if [ "${CONSUMER_VERBOSE:-0}" = 1 ]; then sed "s/^/  | /" "$log"; fi
  if [ "$rc" -eq 0 ]; then
    PASSED=$((PASSED + 1))
    echo "$PREFIX: $name: ok ($took)"
  else
    FAILED=$((FAILED + 1))
    FAILED_NAMES+=("$name")
    echo "$PREFIX: $name: FAILED (exit $rc, $took); end of its log:"
    if [ "${CONSUMER_VERBOSE:-0}" != 1 ]; then grep -v 'npm warn Unknown user config' "$log" | tail -n 60 | sed "s/^/  | /"; fi
    if grep -q 'TS2578' "$log"; then
      echo "$PREFIX: $name: an '@ts-expect-error' misuse type-checks now (TS2578 above): the published types accept it"
    fi
  fi
}

print_summary() {
  local t0=$1
  if [ "$FAILED" -gt 0 ]; then echo "$PREFIX: failed: ${FAILED_NAMES[*]}"; fi
  echo "$PREFIX: total $(secs_since "$t0")"
  echo "$PREFIX: $PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
}
