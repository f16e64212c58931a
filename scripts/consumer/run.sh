#!/usr/bin/env bash
# Consumer tests of the packed package (issue 6, "Package correctness").
#
#   scripts/consumer/run.sh [tarball]
#
# Without a tarball it runs `npm run build` and `npm pack` into a temporary directory. Each check
# then creates a FRESH temporary npm project (mktemp -d; removed on exit) that installs only the
# tarball plus the few tools that check needs, and uses the package the way a user would: by its
# name, through package.json `exports`, from node_modules.
#
# Node: everything runs on the project's pinned Node (devDependency `node`, 24; the machine's own
# node is 20), found with `npm exec node` in the repo and put first on PATH; each temporary
# project names that exact version in package.json `engines` and has engine-strict=true in its
# .npmrc. The other Node lines are covered by scripts/consumer/multi-node.sh.
#
# Checks (fixtures in scripts/consumer/fixtures/, each file says what it proves):
#   esm                ESM script (smoke.mjs): `import` of chat-service-sdk and /testing resolves to
#                      dist/*.js; fake in listen mode; each of the 6 endpoints once, results asserted
#                      against the fake's state; error classes via instanceof; VERSION equals
#                      package.json and is sent in user-agent. msw is NOT installed: proves listen
#                      mode works without it and msw mode names what is missing.
#   cjs                The same with `require` (smoke.cjs), resolving to dist/*.cjs; no msw either.
#   msw                Installs msw@^3 + @mswjs/interceptors too; msw mode (fake.handlers +
#                      createMswNetwork) from ESM (msw.mjs) and from CommonJS (msw.cjs).
#   esm-cjs-errors     One `type: module` app loads both builds: `import` (dist/index.js) and
#                      `createRequire` (dist/index.cjs). dual-errors.mjs checks `instanceof` across
#                      the two copies for every exported error class, both ways: an error is an
#                      instance of its class and ancestors from the other copy and of no other
#                      class; and a 404 thrown by each copy's client against the other's classes.
#   ts-nodenext-esm    @types/node, `type: module`, module/moduleResolution nodenext, strict: tsc --noEmit
#                      of sample.ts (every endpoint, the public types, Page/PagePromise/MessagePage,
#                      for await, instanceof on every error class, chat-service-sdk/testing), misuse.ts
#                      (the negative check: each `// @ts-expect-error` misuse must be an error) and
#                      optional-undefined.ts (every optional property of every input accepts an
#                      explicit `undefined`: every ts-* project has exactOptionalPropertyTypes), under
#                      each TypeScript users have (below). Then runs sample.ts and
#                      optional-undefined.ts on Node (type stripping) against the fake, so the
#                      types are checked against the real behaviour too.
#   ts-nodenext-cjs    The same type checks in a CommonJS package (resolves the .d.cts files), with
#                      @types/node@^22 (a Node 22 user; the others use @types/node@^24).
#   ts-bundler         The same type checks with module esnext + moduleResolution bundler.
#   ts-node10-cjs      The oldest TypeScript, a CommonJS package, module commonjs +
#                      moduleResolution node10 (gone from TypeScript 7), which ignores `exports`: the
#                      subpaths resolve through package.json `typesVersions` only. The same type check
#                      plus the msw-mode types (msw installed), and tsc's file list must show the
#                      .d.cts of chat-service-sdk/testing and /testing/msw.
#   ts-libcheck        skipLibCheck: false with msw installed: the package's .d.ts AND .d.cts
#                      (sample + msw-mode types copied in as .mts and .cts) are checked in full, under
#                      TypeScript 6.0 and 7 (msw 3's own declarations need a TypeScript newer than
#                      5.5: `Uint8Array<...>`, and require() of ES modules from .cts).
#   ts-libcheck-no-msw skipLibCheck: false WITHOUT msw: chat-service-sdk and chat-service-sdk/testing
#                      type-check in full without msw (only chat-service-sdk/testing/msw needs it).
# TypeScript: every ts-* check runs each compiler of the repository's devDependencies, so that no
# project downloads one: the oldest supported (`typescript-5.5`, npm:typescript@~5.5.4: zod 4, whose
# types are part of ours, states 5.5 as its floor; 5.0 to 5.4 compile the types today but are not
# promised), the one the project builds with (`typescript`, ~6.0), and TypeScript 7 (`typescript-7`,
# the native compiler). README.md, "Support policy", names them.
# The ts-* projects other than ts-libcheck* use skipLibCheck: true (what `tsc --init` writes),
# for that reason and because a full library check costs about 10 s per project.
#
# Output: "consumer: <check>: ok (N s)" per check, or "consumer: <check>: FAILED ..." with the end
# of its log; the last line is "consumer: N passed, N failed"; exit status 1 if anything failed.
# CONSUMER_VERBOSE=1 prints every check's full log; CONSUMER_JOBS=N runs N checks at a time
# (default 4). About a minute on 2 cores with a warm npm cache, build included.
set -euo pipefail
PREFIX=consumer
# shellcheck source=scripts/consumer/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The compilers (devDependencies of the repository, see above), oldest first.
TSC_OLDEST=$ROOT/node_modules/typescript-5.5/bin/tsc
TSC_6=$ROOT/node_modules/typescript/bin/tsc
TSC_7=$ROOT/node_modules/typescript-7/bin/tsc
COMPILERS=("$TSC_OLDEST" "$TSC_6" "$TSC_7")
TYPES_NODE=@types/node@^24
TYPES_NODE_22=@types/node@^22 # a Node 22 user's types: the package supports Node 22.19
MSW=(msw@^3 @mswjs/interceptors)
LIBS=es2023,esnext.disposable

started=$(now_ms)
make_workdir
setup_node
get_tarball "${1:-}"
for tsc in "${COMPILERS[@]}"; do
  [ -f "$tsc" ] || die "$tsc is missing: run npm install in $ROOT (the TypeScript versions are devDependencies)"
  echo "$PREFIX: TypeScript $("$NODE" "$tsc" -v | sed 's/^Version //') ($tsc)"
done

check_esm() {
  local dir=$WORK/$1
  new_project "$1" module
  npm_install "$dir" "$TARBALL"
  cp "$FIXTURES/smoke.mjs" "$dir/"
  (cd "$dir" && "$NODE" smoke.mjs)
}

check_cjs() {
  local dir=$WORK/$1
  new_project "$1" commonjs
  npm_install "$dir" "$TARBALL"
  cp "$FIXTURES/smoke.cjs" "$dir/"
  (cd "$dir" && "$NODE" smoke.cjs)
}

check_esm_cjs_errors() {
  local dir=$WORK/$1
  new_project "$1" module
  npm_install "$dir" "$TARBALL"
  cp "$FIXTURES/dual-errors.mjs" "$dir/"
  (cd "$dir" && "$NODE" dual-errors.mjs)
}

check_msw() {
  local dir=$WORK/$1
  new_project "$1" module
  npm_install "$dir" "$TARBALL" "${MSW[@]}"
  cp "$FIXTURES/msw.mjs" "$FIXTURES/msw.cjs" "$dir/"
  (cd "$dir" && "$NODE" msw.mjs && "$NODE" msw.cjs)
}

# write_tsconfig DIR MODULE RESOLUTION SKIPLIBCHECK VERBATIM LIBS FILES... (LIBS: comma-separated)
write_tsconfig() {
  local dir=$1 module=$2 resolution=$3 skip=$4 verbatim=$5 libs=$6
  shift 6
  node -e '
    const [dir, module, moduleResolution, skip, verbatim, libs, ...files] = process.argv.slice(1)
    const compilerOptions = {
      module, moduleResolution,
      target: "es2023", lib: libs.split(","), types: ["node"],
      strict: true, noUncheckedIndexedAccess: true, exactOptionalPropertyTypes: true,
      noEmit: true, skipLibCheck: skip === "true", verbatimModuleSyntax: verbatim === "true",
    }
    require("node:fs").writeFileSync(dir + "/tsconfig.json", JSON.stringify({ compilerOptions, files }, null, 2) + "\n")
  ' "$dir" "$module" "$resolution" "$skip" "$verbatim" "$libs" "$@"
  cat "$dir/tsconfig.json"
}

# tsc_in DIR [TSC...]: tsc --noEmit in DIR with each compiler (default: all of COMPILERS).
tsc_in() {
  local dir=$1 tsc
  shift
  [ $# -gt 0 ] || set -- "${COMPILERS[@]}"
  for tsc in "$@"; do
    echo "+ tsc --noEmit -p $dir ($("$NODE" "$tsc" -v))"
    (cd "$dir" && "$NODE" "$tsc" --noEmit -p . --pretty false)
  done
}

# check_ts NAME TYPE MODULE RESOLUTION VERBATIM RUN(yes|no) TYPES_NODE
check_ts() {
  local dir=$WORK/$1
  new_project "$1" "$2"
  npm_install "$dir" "$TARBALL" "$7"
  cp "$FIXTURES/sample.ts" "$FIXTURES/misuse.ts" "$FIXTURES/optional-undefined.ts" "$dir/"
  cp "$FIXTURES/metadata-misuse.ts" "$dir/" # typed metadata misuses (withMetadata), also must not compile
  write_tsconfig "$dir" "$3" "$4" true "$5" "$LIBS" sample.ts misuse.ts optional-undefined.ts metadata-misuse.ts
  tsc_in "$dir"
  if [ "$6" = yes ]; then
    echo "+ node sample.ts"
    (cd "$dir" && "$NODE" sample.ts)
    echo "+ node optional-undefined.ts"
    (cd "$dir" && "$NODE" optional-undefined.ts)
  fi
}

# node10 resolution never reads `exports`; without `typesVersions` the subpaths are TS2307.
check_ts_node10() {
  local dir=$WORK/$1 file
  new_project "$1" commonjs
  npm_install "$dir" "$TARBALL" "$TYPES_NODE_22" "${MSW[@]}"
  cp "$FIXTURES/sample.ts" "$FIXTURES/misuse.ts" "$FIXTURES/optional-undefined.ts" "$FIXTURES/msw-types.ts" "$dir/"
  # "dom": msw's own types use DOM globals (see check_ts_libcheck).
  write_tsconfig "$dir" commonjs node10 true false "$LIBS,dom" sample.ts misuse.ts optional-undefined.ts msw-types.ts
  tsc_in "$dir" "$TSC_OLDEST"
  (cd "$dir" && "$NODE" "$TSC_OLDEST" -p . --listFilesOnly) >"$dir/files.txt"
  for file in dist/index.d.cts dist/testing/index.d.cts dist/testing/msw.d.cts; do
    grep -q "node_modules/chat-service-sdk/$file\$" "$dir/files.txt" || {
      echo "tsc did not read chat-service-sdk/$file; it read:"
      grep chat-service-sdk "$dir/files.txt"
      return 1
    }
  done
  echo "tsc read chat-service-sdk's .d.cts for the root, /testing and /testing/msw"
}

check_ts_libcheck() {
  local dir=$WORK/$1
  new_project "$1" module
  npm_install "$dir" "$TARBALL" "$TYPES_NODE" "${MSW[@]}"
  cp "$FIXTURES/sample.ts" "$dir/sample.mts"
  cp "$FIXTURES/sample.ts" "$dir/sample.cts"
  cp "$FIXTURES/optional-undefined.ts" "$dir/optional-undefined.mts"
  cp "$FIXTURES/optional-undefined.ts" "$dir/optional-undefined.cts"
  cp "$FIXTURES/msw-types.ts" "$dir/msw-types.mts"
  cp "$FIXTURES/msw-types.ts" "$dir/msw-types.cts"
  # msw's own types (and @mswjs/interceptors') use DOM globals (Request, MessageEvent, ...): msw
  # users need "dom" in lib. The SDK's types do not (the other projects have no "dom").
  write_tsconfig "$dir" nodenext nodenext false false "$LIBS,dom" sample.mts sample.cts optional-undefined.mts optional-undefined.cts \
    msw-types.mts msw-types.cts
  tsc_in "$dir" "$TSC_6" "$TSC_7"
}

check_ts_libcheck_no_msw() {
  local dir=$WORK/$1
  new_project "$1" module
  npm_install "$dir" "$TARBALL" "$TYPES_NODE"
  cp "$FIXTURES/sample.ts" "$FIXTURES/misuse.ts" "$FIXTURES/optional-undefined.ts" "$dir/"
  write_tsconfig "$dir" nodenext nodenext false true "$LIBS" sample.ts misuse.ts optional-undefined.ts
  tsc_in "$dir"
}

echo "$PREFIX: running 10 checks, $CHECK_JOBS at a time (times are wall-clock, shared)"
start_check esm check_esm
start_check cjs check_cjs
start_check msw check_msw
start_check esm-cjs-errors check_esm_cjs_errors
start_check ts-libcheck check_ts_libcheck
start_check ts-nodenext-esm check_ts module nodenext nodenext true yes "$TYPES_NODE"
start_check ts-nodenext-cjs check_ts commonjs nodenext nodenext false no "$TYPES_NODE_22"
start_check ts-bundler check_ts "" esnext bundler true no "$TYPES_NODE"
start_check ts-node10-cjs check_ts_node10
start_check ts-libcheck-no-msw check_ts_libcheck_no_msw
finish_checks

print_summary "$started"
