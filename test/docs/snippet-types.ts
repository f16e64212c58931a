// The type-check of the documents' snippets (test/docs/snippets.test.ts), with TypeScript 7: the
// native compiler of the `typescript-7` devDependency, in a process of its own, asked through its
// API (`typescript-7/unstable/async`) for the snippets' own diagnostics.
//
// Why 7 and not 6 (the project's `typescript`, whose JS API this check used, in a thread): the
// program (the snippets, src/, @types/node, zod, undici: ~714 files) cost 6's compiler 3.5-5 s of
// CPU to parse and check; 7's some 0.6-0.8 s (its process and this one's client). Why its API and
// not its command: `tsc` checks every file of the program, src/'s bodies too (the typecheck step's
// business), and took 1.6-2.1 s even `--singleThreaded` (4.5-5.7 s with its parallel checkers);
// asked for the snippets' diagnostics alone, it checks of src/ only what their types need, as 6
// did. The API is marked unstable: package-lock.json holds 7.0.2, the typecheck step checks this
// file against its types, and a canary (a file with one known error) must come back with that
// error at its line, or the check fails, so that an API that changed under it cannot pass a
// snippet silently. Users may type-check with 5.5, 6 or 7 (README, "Support policy"; the
// consumer checks compile the package's types under all three): the snippets are held to 7. Errors
// planted in copies of three snippets (a wrong option type, an argument too many, a missing member
// or module, a possibly undefined element under noUncheckedIndexedAccess, an implicit any under
// strict, a comparison of literals with no overlap) were reported by 6, 7's command and 7's API
// alike, at the same lines with the same codes; the wording of some messages differs (7 orders a
// union's members, "The last overload gave the following error" under TS2769).
//
// In a process of its own, not the test worker: like the thread before it, outside the V8 isolate
// that `--coverage` (CI) instruments; the compiler is not code of ours to cover.
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { Diagnostic } from 'typescript-7/unstable/async'

/** What to check: the snippet files, the declarations of their globals, the repository. */
export interface Request {
  readonly files: readonly string[]
  readonly globals: string
  readonly root: string
}

/**
 * A diagnostic: its file, its 0-based line there, and TypeScript's message (`TS2322: ...`, a
 * chained message on further lines, indented). A diagnostic of no file (the compile's) has file ''.
 */
export interface Problem {
  readonly file: string
  readonly line: number
  readonly message: string
}

/** The project: strict, noUncheckedIndexedAccess and exactOptionalPropertyTypes, `chat-service-sdk` from src/. Its paths are absolute. */
function tsconfig(files: readonly string[], { root }: Request): object {
  return {
    compilerOptions: {
      strict: true,
      noUncheckedIndexedAccess: true,
      // On in `tsc --init`'s project since TypeScript 6, so in many users' projects.
      exactOptionalPropertyTypes: true,
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
    files,
  }
}

/** The canary: one error, on its second line (line 1), that any working check reports. */
const CANARY =
  "// A file with one known error (snippet-types.ts): the check must report it.\nexport const canary: number = 'not a number'\n"
const CANARY_ERROR = { line: 1, code: 'TS2322: ' } as const

/** `TS1234: message`, the chain's further messages on lines of their own, indented as `tsc` prints them. */
function messageOf(diagnostic: Diagnostic, indent = ''): string {
  return [
    `${indent}${indent === '' ? `TS${diagnostic.code}: ` : ''}${diagnostic.text}`,
    ...(diagnostic.messageChain ?? []).map((chained) => messageOf(chained, `${indent}  `)),
  ].join('\n')
}

/**
 * Type-checks `request.files` with TypeScript 7 (tsconfig.json and the canary written in the first
 * file's directory); resolves with their diagnostics and the compile's (its options, its root files),
 * not those of the sources they import. Rejects if the compiler does not start, or if it does not
 * report the canary's error.
 */
export async function typeCheck(request: Request): Promise<Problem[]> {
  const dir = dirname(request.files[0] ?? request.globals)
  const project = join(dir, 'tsconfig.json')
  const canary = join(dir, 'canary.ts')
  writeFileSync(canary, CANARY)
  writeFileSync(project, `${JSON.stringify(tsconfig([...request.files, canary, request.globals], request), null, 2)}\n`)
  // Loaded here, when the check runs (the file's CPU meter sees it), not when the test file is imported.
  const { API } = await import('typescript-7/unstable/async')
  const api = new API({ cwd: request.root })
  let found: Problem[]
  try {
    const snapshot = await api.updateSnapshot({ openProject: project })
    const program = snapshot.getProject(project)?.program
    if (program === undefined) throw new Error(`TypeScript 7 opened no project for ${project}`)
    const lines = new Map<string, number[]>()
    const lineOf = (file: string, pos: number): number => {
      let starts = lines.get(file)
      if (starts === undefined) {
        const text = readFileSync(file, 'utf8')
        starts = [0, ...[...text.matchAll(/\n/g)].map((match) => match.index + 1)]
        lines.set(file, starts)
      }
      return starts.findLastIndex((start) => start <= pos)
    }
    const problem = (diagnostic: Diagnostic): Problem => ({
      file: diagnostic.fileName ?? '',
      line: diagnostic.fileName === undefined ? 0 : lineOf(diagnostic.fileName, diagnostic.pos),
      message: messageOf(diagnostic),
    })
    // The compile's own (its options, its root files); not the checker's global diagnostics, which
    // TypeScript 7 gives only after checking every file (the whole of src/: 1.1 s of CPU more). 6's
    // check did not ask for them either: a global that a snippet gets wrong is an error in that snippet.
    const compile = [...(await program.getConfigFileParsingDiagnostics()), ...(await program.getProgramDiagnostics())].map(problem)
    const own: Problem[] = []
    for (const file of [...request.files, canary]) {
      own.push(...[...(await program.getSyntacticDiagnostics(file)), ...(await program.getSemanticDiagnostics(file))].map(problem))
    }
    const fromCanary = own.filter((found) => found.file === canary)
    if (fromCanary.length !== 1 || fromCanary[0]?.line !== CANARY_ERROR.line || !fromCanary[0].message.startsWith(CANARY_ERROR.code)) {
      throw new Error(
        `TypeScript 7 did not report the canary's one error (${CANARY_ERROR.code}at line ${CANARY_ERROR.line + 1} of ${canary}), ` +
          `so its silence on the snippets proves nothing; it reported: ${JSON.stringify(fromCanary)}`,
      )
    }
    found = [...compile, ...own.filter((problem) => problem.file !== canary)]
  } catch (error) {
    // The check's own error says what went wrong; a close that fails after it (TypeScript 7's
    // process gone, say) must not take its place.
    await api.close().catch(() => undefined)
    throw error
  }
  await api.close()
  return found
}
