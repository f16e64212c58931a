// The type-check of the documents' snippets (test/docs/snippets.test.ts), in a worker thread of its
// own: the TypeScript compiler's seconds of CPU then run outside the test worker's V8 isolate, which
// `--coverage` (CI) instruments block by block: there the same check took twice the CPU, and more
// than a minute on a loaded machine. The compiler's own code is not ours to cover; what the snippets
// call runs in the test worker (the same file's `it.each`), covered as before.
import { parentPort, Worker, workerData } from 'node:worker_threads'
import ts from 'typescript'

/** What the thread is asked: the snippet files, the declarations of their globals, the repository. */
interface Request {
  /** Marks the thread's own data (a test worker may itself be a thread, with vitest's data). */
  readonly role: 'snippet-types'
  readonly files: readonly string[]
  readonly globals: string
  readonly root: string
}

/** A diagnostic of a snippet: its file, its 0-based line there, and TypeScript's message. */
export interface Problem {
  readonly file: string
  readonly line: number
  readonly message: string
}

/** The diagnostics of `files` (theirs only) with strict and noUncheckedIndexedAccess, against src/. */
function check({ files, globals, root }: Request): Problem[] {
  const program = ts.createProgram([...files, globals], {
    strict: true,
    noUncheckedIndexedAccess: true,
    target: ts.ScriptTarget.ES2023,
    lib: ['lib.es2023.d.ts', 'lib.es2024.string.d.ts', 'lib.esnext.disposable.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    typeRoots: [`${root}/node_modules/@types`],
    noEmit: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    paths: {
      'chat-service-sdk': [`${root}/src/index.ts`],
      'chat-service-sdk/testing': [`${root}/src/testing/index.ts`],
      'chat-service-sdk/testing/msw': [`${root}/src/testing/msw.ts`],
      // Temporal's protobuf declarations (8.9 MB, ~1 s to parse), which no snippet uses: the file says why.
      '@temporalio/proto': [`${root}/test/docs/temporal-proto.d.ts`],
      '@temporalio/proto/*': [`${root}/test/docs/temporal-proto.d.ts`],
    },
  })
  // The snippets' own diagnostics only: the checker reads src/ for the types the snippets use, and
  // does not check the rest of its bodies (the typecheck step does), which is most of the time.
  const mine = new Set(files)
  return program
    .getSourceFiles()
    .filter((file) => mine.has(file.fileName))
    .flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)])
    .map((diagnostic) => ({
      file: diagnostic.file?.fileName ?? '',
      line: diagnostic.file?.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line ?? 0,
      message: ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'),
    }))
}

/** Type-checks `request.files` in a worker thread; resolves with their diagnostics. */
export function typeCheckInThread(request: Omit<Request, 'role'>): Promise<Problem[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { ...request, role: 'snippet-types' } satisfies Request })
    worker.once('message', (problems: Problem[]) => {
      resolve(problems)
    })
    worker.once('error', reject)
    worker.once('exit', (code) => {
      reject(new Error(`the type-check thread ended (exit code ${code}) without an answer`))
    })
  })
}

if ((workerData as Partial<Request> | null)?.role === 'snippet-types') parentPort?.postMessage(check(workerData as Request))
