// The type-check of the documents' snippets (test/docs/snippets.test.ts), with TypeScript 7: the
// native compiler of the `typescript-7` devDependency, run as its command in a child process, on a
// tsconfig.json written beside the snippets.
//
// Why 7 and not 6 (the project's `typescript`, whose JS API this check used): the same program
// (the snippets, src/, @types/node, zod, undici: ~714 files) costs 6's compiler, in a thread of
// the test worker, some 3.5-5 s of CPU to parse and check, and 7 some 1.6-1.9 s, although 7 checks
// src/'s own bodies as well (its command cannot be asked for some files' diagnostics; theirs are
// left out below, the typecheck step's business). `--singleThreaded`: with its parallel checkers,
// each doing the shared work again, 7 took 4.5-5.7 s of CPU for the same check. Users may
// type-check with 5.5, 6 or 7 (README, "Support policy"; the consumer checks compile the
// package's types under all three): the snippets are held to 7. Errors planted in copies of three
// snippets (a wrong option type, an argument too many, a missing member or module, a possibly
// undefined element under noUncheckedIndexedAccess, an implicit any under strict, a comparison of
// literals with no overlap) were reported by 6 and 7 alike, at the same lines with the same codes;
// the wording of some messages differs (7 orders a union's members, "The last overload gave the
// following error" under TS2769). One difference: 7, as `tsc` always did, reports a file's syntax
// errors without its semantic ones; a snippet that does not parse fails the check either way.
//
// A child process, not the test worker: like the thread before it, outside the V8 isolate that
// `--coverage` (CI) instruments, and the compiler is not code of ours to cover.
import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'

/** TypeScript 7's command: its package's bin, which hands its process to the native compiler (Node.js 22.15 and later). */
const TSC_7 = join(dirname(createRequire(import.meta.url).resolve('typescript-7/package.json')), 'bin/tsc')

/** What to check: the snippet files, the declarations of their globals, the repository. */
export interface Request {
  readonly files: readonly string[]
  readonly globals: string
  readonly root: string
}

/**
 * A diagnostic of a snippet: its file, its 0-based line there, and TypeScript's message (a chained
 * message on several lines). A diagnostic of no file (the compiler's options) has file '' and line 0.
 */
export interface Problem {
  readonly file: string
  readonly line: number
  readonly message: string
}

/** The project: strict and noUncheckedIndexedAccess, `chat-service-sdk` from src/. Its paths are absolute. */
function tsconfig({ files, globals, root }: Request): object {
  return {
    compilerOptions: {
      strict: true,
      noUncheckedIndexedAccess: true,
      target: 'es2023',
      lib: ['es2023', 'es2024.string', 'esnext.disposable'],
      module: 'nodenext',
      moduleResolution: 'nodenext',
      types: ['node'],
      typeRoots: [`${root}/node_modules/@types`],
      noEmit: true,
      skipLibCheck: true,
      allowImportingTsExtensions: true,
      paths: {
        'chat-service-sdk': [`${root}/src/index.ts`],
        'chat-service-sdk/testing': [`${root}/src/testing/index.ts`],
        'chat-service-sdk/testing/msw': [`${root}/src/testing/msw.ts`],
        // Temporal's protobuf declarations (8.9 MB), which no snippet uses: the file says why.
        '@temporalio/proto': [`${root}/test/docs/temporal-proto.d.ts`],
        '@temporalio/proto/*': [`${root}/test/docs/temporal-proto.d.ts`],
      },
    },
    files: [...files, globals],
  }
}

/**
 * `tsc --pretty false`'s diagnostics: `path(line,column): error TS1234: message`, a chained
 * message's further lines indented under it; a diagnostic of no file is `error TS1234: message`.
 * Paths are relative to `cwd`. A line that is neither is kept as a problem of its own: nothing the
 * compiler says is dropped.
 */
export function parseDiagnostics(output: string, cwd: string): Problem[] {
  const problems: { file: string; line: number; message: string }[] = []
  for (const text of output.split('\n')) {
    if (text.trim() === '') continue
    const located = /^(.+)\((\d+),\d+\): error (TS\d+: .*)$/.exec(text)
    const global = /^error (TS\d+: .*)$/.exec(text)
    const last = problems.at(-1)
    if (located !== null) problems.push({ file: resolve(cwd, located[1] ?? ''), line: Number(located[2]) - 1, message: located[3] ?? '' })
    else if (global !== null) problems.push({ file: '', line: 0, message: global[1] ?? '' })
    else if (text.startsWith('  ') && last !== undefined) last.message += `\n${text.slice(2).trimEnd()}`
    else problems.push({ file: '', line: 0, message: text })
  }
  return problems
}

/**
 * Type-checks `request.files` with TypeScript 7 (tsconfig.json written in the first file's
 * directory); resolves with their diagnostics and the compile's (not src/'s). Rejects
 * if the compiler fails to run, or ends with a status other than 0 (no error) or 1-2 (errors
 * reported, which its output must then hold).
 */
export function typeCheck(request: Request): Promise<Problem[]> {
  const project = join(dirname(request.files[0] ?? request.globals), 'tsconfig.json')
  writeFileSync(project, `${JSON.stringify(tsconfig(request), null, 2)}\n`)
  const mine = new Set(request.files)
  return new Promise((resolvePromise, reject) => {
    execFile(
      process.execPath,
      [TSC_7, '--project', project, '--pretty', 'false', '--singleThreaded'],
      { cwd: request.root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : error.code
        // 1 and 2: diagnostics reported (outputs skipped or made; noEmit skips them).
        if (code !== 0 && code !== 1 && code !== 2) {
          reject(new Error(`TypeScript 7 (${TSC_7}) failed: ${error?.message ?? ''}\n${stderr}`))
          return
        }
        // The snippets' own, and the compile's (its options: no file, or tsconfig.json); not those of
        // the sources they import (src/, the globals' declarations), which the typecheck step checks.
        const problems = parseDiagnostics(stdout, request.root).filter(
          (problem) => mine.has(problem.file) || !/\.[cm]?tsx?$/.test(problem.file),
        )
        if (code !== 0 && !stdout.includes('error TS')) {
          reject(new Error(`TypeScript 7 ended with status ${code} and no diagnostic:\n${stdout}${stderr}`))
          return
        }
        resolvePromise(problems)
      },
    )
  })
}
