// Compiles a release's consumer fixtures (api/releases/<v>/consumer-fixtures/*.ts, the type checks
// scripts/consumer/run.sh ran on that release) against another copy of the package's types, the way
// run.sh's ts-nodenext-esm project does (nodenext, strict, exactOptionalPropertyTypes,
// noUncheckedIndexedAccess, skipLibCheck), and says which API names each error involves, so that
// the gate can ask whether the CHANGELOG lists it as a break.
//
// The fixtures compiled cleanly against their own release. An error now is code of that release's
// users that stops compiling. An unused `// @ts-expect-error` (TS2578) is the opposite: a misuse
// the release refused now compiles (its types accept more); reported, not a break.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import ts from 'typescript'

/** One error of the compile. */
export interface FixtureError {
  /** `sample.ts:128` */
  readonly where: string
  readonly code: number
  readonly message: string
  /** The API names the error involves (declarations of the package its statement uses, names its message quotes). */
  readonly names: readonly string[]
}

export interface FixtureCompile {
  readonly files: readonly string[]
  readonly errors: readonly FixtureError[]
  /** TS2578: misuses the release refused that now compile. */
  readonly relaxed: readonly FixtureError[]
}

/**
 * Compiles every `.ts` file of `fixturesDir` (but `skip`) against the package installed at `packageDir` (a
 * directory holding package.json and dist/), with the other packages the fixtures import (zod,
 * undici, msw, @types/node) taken from `nodeModules`.
 */
export function compileFixtures(
  fixturesDir: string,
  packageDir: string,
  nodeModules: string,
  skip: readonly string[] = [],
): FixtureCompile {
  // The project's node_modules holds the package; the other packages are found one directory up,
  // where Node.js's and TypeScript's resolution look next: work/node_modules (`linkOtherPackages`).
  const work = mkdtempSync(join(tmpdir(), 'chat-service-sdk-fixtures-'))
  try {
    linkOtherPackages(nodeModules, join(work, 'node_modules'))
    const project = join(work, 'project')
    const modules = join(project, 'node_modules')
    mkdirSync(modules, { recursive: true })
    symlinkSync(packageDir, join(modules, 'chat-service-sdk'), 'dir')
    const files = readdirSync(fixturesDir)
      .filter((name) => name.endsWith('.ts') && !skip.includes(name))
      .sort()
    for (const name of files) symlinkSync(join(fixturesDir, name), join(project, name))
    const usesMsw = files.some((name) =>
      /from '(msw|@mswjs\/|chat-service-sdk\/testing\/msw)/.test(readFileSync(join(fixturesDir, name), 'utf8')),
    )
    // The fixtures' own package is an ES module project, like run.sh's ts-nodenext-esm.
    ts.sys.writeFile(join(project, 'package.json'), '{ "type": "module", "private": true }\n')
    const options: ts.CompilerOptions = {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2023,
      // "dom" for msw's own types, which use DOM globals (as run.sh's msw projects say); only
      // when a fixture imports msw (lib.dom is most of a small compile's time).
      lib: ['lib.es2023.d.ts', 'lib.esnext.disposable.d.ts', ...(usesMsw ? ['lib.dom.d.ts'] : [])],
      types: ['node'],
      strict: true,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
      skipLibCheck: true,
      noEmit: true,
      // The package is linked in from elsewhere: its own imports (undici, zod) must resolve from
      // the project's node_modules and those above it, as in an installed copy, not from where the
      // files really are.
      preserveSymlinks: true,
      // A package given as sources (the tests': package.json `types` pointing into src/).
      allowImportingTsExtensions: true,
    }
    const program = ts.createProgram(
      files.map((name) => join(project, name)),
      options,
      hostReusingFiles(options, work),
    )
    const checker = program.getTypeChecker()
    const installed = join(modules, 'chat-service-sdk')
    const errors: FixtureError[] = []
    const relaxed: FixtureError[] = []
    // The fixtures' own errors (and the options'): a package given as sources (the tests' way to skip
    // a build) is not checked under the fixtures' options.
    const fixtureFiles = program.getSourceFiles().filter((file) => file.fileName.startsWith(project) && !file.fileName.startsWith(modules))
    const diagnostics = [
      ...program.getOptionsDiagnostics(),
      ...program.getGlobalDiagnostics(),
      ...fixtureFiles.flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]),
    ]
    for (const diagnostic of diagnostics) {
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')
      const file = diagnostic.file
      let where = 'the compile'
      const names = new Set(quotedNames(message))
      // A name the package no longer exports (TS2305, TS2724 "did you mean"): that name is the break,
      // not the other names its import statement brings (an entry naming one of them says nothing of it).
      const missing = MISSING_EXPORT.has(diagnostic.code) ? /has no exported member(?: named)? '([\w$]+)'/.exec(message)?.[1] : undefined
      if (missing !== undefined) names.clear()
      if (missing !== undefined) names.add(missing)
      if (file !== undefined && diagnostic.start !== undefined) {
        where = `${file.fileName.slice(project.length + 1)}:${file.getLineAndCharacterOfPosition(diagnostic.start).line + 1}`
        if (missing === undefined) for (const name of usedNames(file, diagnostic.start, checker, installed)) names.add(name)
      }
      const error = { where, code: diagnostic.code, message, names: [...names].sort() }
      if (diagnostic.code === 2578) relaxed.push(error)
      else errors.push(error)
    }
    return { files, errors, relaxed }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/**
 * Makes `to` give the packages of `nodeModules` but chat-service-sdk: one link to `nodeModules`
 * itself, instead of one for each of its ~300 packages (which took more of a small compile than the
 * compile), unless it holds a chat-service-sdk (installed or linked into the repository). That one
 * must not be found: TypeScript, unlike Node.js, goes on to the next node_modules up when a package's
 * `exports` lack a subpath, so a fixture importing an entry point the package under test no longer
 * has (`chat-service-sdk/testing/msw`) would compile against that copy's, and the break go unseen.
 * Then `to` is a directory of links to the others, one each.
 */
function linkOtherPackages(nodeModules: string, to: string): void {
  const names = readdirSync(nodeModules)
  if (!names.includes('chat-service-sdk')) {
    symlinkSync(nodeModules, to, 'dir')
    return
  }
  mkdirSync(to)
  for (const name of names) {
    if (name === 'chat-service-sdk' || name.startsWith('.')) continue
    symlinkSync(join(nodeModules, name), join(to, name), 'dir')
  }
}

/**
 * Parsed files kept for the process's later compiles (the release gate's tests run the gate 4 times
 * in one thread): @types/node, the TypeScript libs, the packages, each 2-3 MB of declarations parsed
 * again by every compile. Keyed by the name within the compile's directory (a new temporary one
 * each time), the format it is parsed for, and its text, which is read again each time: a file that
 * changed is parsed again. The program gives a reused file its new names (TypeScript's language
 * service reuses files between programs the same way); every compile here has the same options but
 * `lib`, which does not change how a file is parsed or bound.
 */
const parsed = new Map<string, ts.SourceFile>()

/** A compiler host that takes unchanged files from `parsed` (names under `work` keyed without it). */
function hostReusingFiles(options: ts.CompilerOptions, work: string): ts.CompilerHost {
  const host = ts.createCompilerHost(options)
  // As `tsc` parses (since TypeScript 5.3): a .ts file's JSDoc only where it holds @see or @link,
  // which the checker reads; the rest of it changes no type and no error (a quarter of the parse).
  host.jsDocParsingMode = ts.JSDocParsingMode.ParseForTypeErrors
  const parse = host.getSourceFile.bind(host)
  host.getSourceFile = (fileName, format, onError, fresh) => {
    const text = fresh === true ? undefined : host.readFile(fileName)
    if (text === undefined) return parse(fileName, format, onError, fresh)
    const version =
      typeof format === 'object' ? `${format.languageVersion}:${format.impliedNodeFormat}:${format.jsDocParsingMode}` : `${format}`
    const key = `${fileName.startsWith(`${work}/`) ? fileName.slice(work.length) : fileName}\0${version}`
    const known = parsed.get(key)
    if (known?.text === text) return known
    const file = ts.createSourceFile(fileName, text, format, false)
    parsed.set(key, file)
    return file
  }
  return host
}

/** "Module '...' has no exported member 'X'" (2305), "... has no exported member named 'X'. Did you mean 'Y'?" (2724). */
const MISSING_EXPORT = new Set([2305, 2724])

/** Names a message quotes: `'PagePromise<Agent>'` gives PagePromise and Agent; "Property 'x' ... on type 'T'" gives T.x too. */
function quotedNames(message: string): string[] {
  const names: string[] = []
  for (const match of message.matchAll(/'([^'\n]+)'/g)) {
    for (const word of (match[1] ?? '').matchAll(/[A-Za-z_$][\w$]*/g)) names.push(word[0])
  }
  for (const match of message.matchAll(/Property '([\w$]+)' (?:does not exist|is missing) (?:on|in) type '([\w$]+)/g)) {
    names.push(`${match[2]}.${match[1]}`)
  }
  return names
}

/** The package's declarations that the statement holding `position` uses, as API names (`CustomerUsers.list`). */
function usedNames(file: ts.SourceFile, position: number, checker: ts.TypeChecker, installed: string): string[] {
  let statement: ts.Node | undefined
  const find = (node: ts.Node): void => {
    if (position < node.getStart(file) || position >= node.getEnd()) return
    if (ts.isStatement(node) && !ts.isBlock(node)) statement = node
    ts.forEachChild(node, find)
  }
  find(file)
  if (statement === undefined) return []
  const names: string[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node)) {
      let symbol = checker.getSymbolAtLocation(node)
      if (symbol !== undefined && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol)
      for (const declaration of symbol?.declarations ?? []) {
        // The package's own files (paths as linked: preserveSymlinks), not its dependencies'.
        const path = declaration.getSourceFile().fileName
        if (!path.startsWith(`${installed}/`) || path.includes('/node_modules/', installed.length)) continue
        const name = apiName(declaration)
        if (name !== undefined) names.push(name)
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(statement)
  return names
}

/** `Name` for a top-level declaration, `Container.member` for a member (as the API report keys them). */
function apiName(declaration: ts.Declaration): string | undefined {
  const own = ts.getNameOfDeclaration(declaration)
  const name = ts.isConstructorDeclaration(declaration) ? 'constructor' : own !== undefined && ts.isIdentifier(own) ? own.text : undefined
  if (name === undefined) return undefined
  let parent: ts.Node = declaration.parent
  if (ts.isTypeLiteralNode(parent) && ts.isTypeAliasDeclaration(parent.parent)) parent = parent.parent
  if (ts.isClassDeclaration(parent) || ts.isInterfaceDeclaration(parent) || ts.isTypeAliasDeclaration(parent)) {
    return parent.name === undefined ? name : `${parent.name.text}.${name}`
  }
  return ts.isSourceFile(parent) || ts.isModuleBlock(parent) || ts.isVariableDeclarationList(parent) ? name : undefined
}
