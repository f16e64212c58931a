// Reads api-extractor reports (api/*.api.md) and compares two of them, declaration by declaration.
//
// A report's ```ts block is TypeScript declarations; they are parsed (the TypeScript compiler's
// parser, not text lines) into API items, each with a key and a canonical text:
//   - every top-level declaration: `Name` (its header: kind, type parameters, heritage; for other
//     declarations the whole of it, printed without comments);
//   - every member of a class, an interface, or a type alias of an object literal type:
//     `Name.member` (`Name.constructor`, `Name.[Symbol.asyncIterator]`, `Name.()` for a call
//     signature, `Name.[index]`); overloads and get/set pairs are one item.
// `@internal` items and `private` members are not API (users cannot reach them); `protected`
// members are (subclasses can). `VERSION`'s value is not compared (it changes with every release).
//
// Classification, per key (see DEVELOPERS.md, "Releases"):
//   removed                           breaking, except a member now inherited, as the same type,
//                                     from what its class or interface extends (`extends B`,
//                                     `extends Omit<B, 'x'>`, up the chain): moved up, still there
//   changed text                      not a change when it is the same type written another way
//                                     (same-type.ts: a type alias or interface the other report
//                                     lacks spelled out, `ConstructorParameters<typeof C>[0]`, the
//                                     order of a union or of an object type's members); additive
//                                     when a declaration only gained a namespace of its name;
//                                     else breaking, except a function or method that only gained
//                                     trailing optional parameters (additive); a compatible change
//                                     the text cannot show (a widened input) is said so by an
//                                     "Added" or "Changed" entry naming `Name.member` (the gate)
//   added declaration                 additive
//   added member of a class           additive
//   added optional member             additive
//   added required member of an       breaking (objects users write of that type stop compiling;
//   interface or object type          the method cannot tell types users only receive: the gate
//                                     takes an "Added" entry naming `Name.member` as saying so)
//   newly @deprecated                 deprecated (announced, not breaking)
// The method sees declarations, not behaviour, and compares text, not types: a change that keeps
// the types compatible but is written differently in a way same-type.ts does not know (a union
// widened, `Pick<X, 'a'>` spelled out) is reported as breaking; a change of what a function does
// is not seen at all. The consumer fixtures
// of the last release (compiled against today's types) are the second, type-level check.
import ts from 'typescript'
import { sameType } from './same-type.ts'

/** One API item of a report. */
export interface ApiItem {
  /** `Name` or `Name.member`. */
  readonly key: string
  /** The declaration printed without comments (overloads joined by newlines). */
  readonly text: string
  /** A member that objects of its type may leave out (`?`), or a class member (never written by users). */
  readonly optionalToAdd: boolean
  readonly deprecated: boolean
  /** For functions and methods with one signature: their parameters, return type and type parameters. */
  readonly signature?: Signature | undefined
  /** Its declaration (one: overloads and merged declarations have none), for `sameType`. */
  readonly node?: ts.Node | undefined
  /** The report it was parsed from (the node's source file). */
  readonly file?: ts.SourceFile | undefined
  /** Its text is the declaration's header (a class, interface or object type alias). */
  readonly header?: boolean | undefined
  /** For a class or interface: what it inherits members from (`extends`). */
  readonly bases?: readonly Base[] | undefined
}

/** One type a class or interface extends: `B`, `Omit<B, 'a' | 'b'>` (all but those) or `Pick<B, 'a'>` (only those). */
export interface Base {
  readonly name: string
  readonly only?: readonly string[] | undefined
  readonly except?: readonly string[] | undefined
}

interface Signature {
  readonly typeParameters: string
  readonly parameters: readonly { readonly text: string; readonly optional: boolean }[]
  readonly returns: string
}

export type ChangeKind = 'breaking' | 'additive' | 'deprecated'

/** One difference between two reports. */
export interface ApiChange {
  readonly kind: ChangeKind
  /** The entry point (`chat-service-sdk`, `chat-service-sdk/testing`, ...). */
  readonly entry: string
  /** The item's key: `Name` or `Name.member`. */
  readonly key: string
  /** What happened, for the gate's output: `removed`, `changed`, `added`, `deprecated`. */
  readonly what: string
  readonly before?: string | undefined
  readonly after?: string | undefined
}

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed })

/** The ```ts block of an api-extractor report. */
export function reportCode(markdown: string): string {
  const match = /```ts\n([\s\S]*?)\n```/.exec(markdown.replace(/\r\n/g, '\n'))
  if (match?.[1] === undefined) throw new Error('not an api-extractor report: no ```ts block')
  return match[1]
}

/**
 * Reports parsed in this process, by their text. The release gate's tests run the gate ~20 times in
 * one thread, on copies of the repository's reports and of the last release's, nearly all of them
 * unchanged (some 0.05 s a parse; the same text parses to the same items, which nothing changes).
 */
const parsedReports = new Map<string, ReadonlyMap<string, ApiItem>>()

/** The API items of a report, by key (the same map for the same text: do not change it). */
export function parseReport(markdown: string): ReadonlyMap<string, ApiItem> {
  const known = parsedReports.get(markdown)
  if (known !== undefined) return known
  const items = parseItems(markdown)
  parsedReports.set(markdown, items)
  return items
}

function parseItems(markdown: string): Map<string, ApiItem> {
  const file = ts.createSourceFile('report.d.ts', reportCode(markdown), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const items = new Map<string, ApiItem>()
  const add = (item: ApiItem): void => {
    const seen = items.get(item.key)
    // Overloads, get/set pairs, a class and its merged namespace: one item, texts in a stable order.
    items.set(
      item.key,
      seen === undefined
        ? item
        : {
            key: item.key,
            text: [seen.text, item.text].sort().join('\n'),
            optionalToAdd: seen.optionalToAdd && item.optionalToAdd,
            deprecated: seen.deprecated && item.deprecated,
            bases: seen.bases ?? item.bases,
          },
    )
  }
  const visit = (statements: readonly ts.Statement[], prefix: string): void => {
    for (const statement of statements) {
      if (ts.isImportDeclaration(statement) || ts.isImportEqualsDeclaration(statement)) continue
      const tags = releaseTags(statement, file)
      if (tags.internal) continue
      if (ts.isModuleDeclaration(statement) && statement.body !== undefined && ts.isModuleBlock(statement.body)) {
        const name = `${prefix}${statement.name.getText(file)}`
        add({ key: name, text: `namespace ${name}`, optionalToAdd: true, deprecated: tags.deprecated })
        visit(statement.body.statements, `${name}.`)
        continue
      }
      if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) {
          const name = `${prefix}${declaration.name.getText(file)}`
          // The version string changes with every release and is not API shape.
          const text = name === 'VERSION' ? 'const VERSION: string' : print(declaration, file)
          add({ key: name, text, optionalToAdd: true, deprecated: tags.deprecated })
        }
        continue
      }
      if (ts.isExportDeclaration(statement) || ts.isExportAssignment(statement)) {
        add({ key: `${prefix}${print(statement, file)}`, text: print(statement, file), optionalToAdd: true, deprecated: tags.deprecated })
        continue
      }
      const name = declarationName(statement, file)
      if (name === undefined) {
        add({ key: `${prefix}${print(statement, file)}`, text: print(statement, file), optionalToAdd: true, deprecated: tags.deprecated })
        continue
      }
      const key = `${prefix}${name}`
      const members = membersOf(statement)
      if (members === undefined) {
        add({
          key,
          text: print(statement, file),
          optionalToAdd: true,
          deprecated: tags.deprecated,
          signature: signatureOf(statement, file),
          node: statement,
          file,
        })
        continue
      }
      add({
        key,
        text: headerOf(statement, file),
        optionalToAdd: true,
        deprecated: tags.deprecated,
        node: statement,
        file,
        header: true,
        bases: basesOf(statement, file),
      })
      const inClass = ts.isClassDeclaration(statement)
      for (const member of members.list) {
        const memberTags = releaseTags(member, file)
        if (memberTags.internal || isPrivate(member)) continue
        add({
          key: `${key}.${memberName(member, file)}`,
          text: print(member, file),
          optionalToAdd: inClass || ('questionToken' in member && member.questionToken !== undefined),
          deprecated: tags.deprecated || memberTags.deprecated,
          signature: signatureOf(member, file),
          node: member,
          file,
        })
      }
    }
  }
  visit(file.statements, '')
  return items
}

/** The differences from `before` to `after` (two parsed reports of one entry point). */
export function compareReports(before: ReadonlyMap<string, ApiItem>, after: ReadonlyMap<string, ApiItem>, entry: string): ApiChange[] {
  const changes: ApiChange[] = []
  for (const [key, old] of before) {
    const now = after.get(key)
    if (now === undefined) {
      // A member that moved to a base (the same type there) is still on the class or interface.
      const inherited = inheritedFrom(before, after, key, old)
      if (inherited !== undefined) continue
      changes.push({ kind: 'breaking', entry, key, what: 'removed', before: old.text })
      continue
    }
    if (now.text !== old.text && !sameType(old, before, now, after)) {
      if (gainedNamespace(old.text, now.text)) {
        changes.push({ kind: 'additive', entry, key, what: 'merged with a new namespace', before: old.text, after: now.text })
        continue
      }
      const additive = onlyGainedOptionalParameters(old.signature, now.signature)
      changes.push({
        kind: additive ? 'additive' : 'breaking',
        entry,
        key,
        what: additive ? 'gained optional parameters' : 'changed',
        before: old.text,
        after: now.text,
      })
    }
    if (now.deprecated && !old.deprecated) changes.push({ kind: 'deprecated', entry, key, what: 'deprecated' })
  }
  for (const [key, now] of after) {
    if (before.has(key)) continue
    const parent = key.includes('.') ? key.slice(0, key.lastIndexOf('.')) : undefined
    // The members of a new declaration come with it: its addition is the change.
    if (parent !== undefined && after.has(parent) && !before.has(parent)) continue
    const member = parent !== undefined && before.has(parent)
    const breaking = member && !now.optionalToAdd
    changes.push({
      kind: breaking ? 'breaking' : 'additive',
      entry,
      key,
      what: breaking ? 'added as a required member' : 'added',
      after: now.text,
    })
    if (now.deprecated) changes.push({ kind: 'deprecated', entry, key, what: 'deprecated' })
  }
  return changes
}

/**
 * For `Name.member` gone from a class or interface: the base (`extends B`, `extends Omit<B, 'x'>`, up
 * the chain) that now has it, as the same type (`sameType`), and passes it on.
 */
function inheritedFrom(
  before: ReadonlyMap<string, ApiItem>,
  after: ReadonlyMap<string, ApiItem>,
  key: string,
  old: ApiItem,
): string | undefined {
  const dot = key.lastIndexOf('.')
  if (dot < 0) return undefined
  const member = key.slice(dot + 1)
  const passes = (base: Base): boolean => !(base.except?.includes(member) ?? false) && (base.only?.includes(member) ?? true)
  let owners = [key.slice(0, dot)]
  const seen = new Set(owners)
  for (let depth = 0; depth < 10 && owners.length > 0; depth++) {
    const next: string[] = []
    for (const owner of owners) {
      for (const base of (after.get(owner)?.bases ?? []).filter(passes)) {
        const there = after.get(`${base.name}.${member}`)
        if (there !== undefined && (there.text === old.text || sameType(old, before, there, after))) return base.name
        if (!seen.has(base.name)) {
          seen.add(base.name)
          next.push(base.name)
        }
      }
    }
    owners = next
  }
  return undefined
}

/** A declaration that only gained a namespace of the same name (`interface X` and now also `namespace X`): additive. */
function gainedNamespace(before: string, after: string): boolean {
  const old = before.split('\n')
  const now = after.split('\n')
  const extra = [...now]
  for (const line of old) {
    const at = extra.indexOf(line)
    if (at < 0) return false
    extra.splice(at, 1)
  }
  return extra.length > 0 && extra.every((line) => /^namespace [\w$.]+$/.test(line))
}

function onlyGainedOptionalParameters(old: Signature | undefined, now: Signature | undefined): boolean {
  if (old === undefined || now === undefined) return false
  if (old.typeParameters !== now.typeParameters || old.returns !== now.returns) return false
  if (now.parameters.length <= old.parameters.length) return false
  return (
    old.parameters.every((parameter, i) => now.parameters[i]?.text === parameter.text) &&
    now.parameters.slice(old.parameters.length).every((parameter) => parameter.optional)
  )
}

function print(node: ts.Node, file: ts.SourceFile): string {
  return printer.printNode(ts.EmitHint.Unspecified, node, file).trim()
}

// api-extractor writes each item's release tags in a line comment above it: `// @public`, `// @internal`,
// and the deprecation tag after the release tag when the item's TSDoc has one.
function releaseTags(node: ts.Node, file: ts.SourceFile): { internal: boolean; deprecated: boolean } {
  const comments = (ts.getLeadingCommentRanges(file.text, node.getFullStart()) ?? []).map((range) => file.text.slice(range.pos, range.end))
  const text = comments.join('\n')
  return { internal: /@internal\b/.test(text), deprecated: /@deprecated\b/.test(text) }
}

function declarationName(statement: ts.Statement, file: ts.SourceFile): string | undefined {
  if (
    (ts.isClassDeclaration(statement) ||
      ts.isInterfaceDeclaration(statement) ||
      ts.isTypeAliasDeclaration(statement) ||
      ts.isFunctionDeclaration(statement) ||
      ts.isEnumDeclaration(statement)) &&
    statement.name !== undefined
  ) {
    return statement.name.getText(file)
  }
  return undefined
}

type Member = ts.ClassElement | ts.TypeElement

function membersOf(statement: ts.Statement): { list: readonly Member[] } | undefined {
  if (ts.isClassDeclaration(statement) || ts.isInterfaceDeclaration(statement)) return { list: statement.members }
  if (ts.isTypeAliasDeclaration(statement) && ts.isTypeLiteralNode(statement.type)) return { list: statement.type.members }
  return undefined
}

/** A class, interface or object type alias without its members: modifiers, name, type parameters, heritage. */
function headerOf(statement: ts.Statement, file: ts.SourceFile, text = print(statement, file)): string {
  const open = ts.isTypeAliasDeclaration(statement) ? text.indexOf('= {') + 1 : text.indexOf('{')
  return text.slice(0, open).trim()
}

/** What a class (`extends`) or an interface (every `extends`) inherits members from; `Omit` and `Pick` of a declaration say which. */
function basesOf(statement: ts.Statement, file: ts.SourceFile): Base[] | undefined {
  if (!ts.isClassDeclaration(statement) && !ts.isInterfaceDeclaration(statement)) return undefined
  const bases: Base[] = []
  for (const clause of statement.heritageClauses ?? []) {
    if (clause.token !== ts.SyntaxKind.ExtendsKeyword) continue
    for (const type of clause.types) {
      const name = type.expression.getText(file)
      const [target, keys] = type.typeArguments ?? []
      if ((name === 'Omit' || name === 'Pick') && target !== undefined && ts.isTypeReferenceNode(target) && keys !== undefined) {
        const literals = stringLiterals(keys)
        // Keys that are not string literals (`keyof X`): which members it passes is not known here.
        if (literals === undefined) continue
        bases.push({ name: target.typeName.getText(file), ...(name === 'Omit' ? { except: literals } : { only: literals }) })
      } else {
        bases.push({ name })
      }
    }
  }
  return bases
}

/** `'a'` or `'a' | 'b'` as `['a', 'b']`; anything else undefined. */
function stringLiterals(type: ts.TypeNode): string[] | undefined {
  const parts = ts.isUnionTypeNode(type) ? type.types : [type]
  const keys: string[] = []
  for (const part of parts) {
    if (!ts.isLiteralTypeNode(part) || !ts.isStringLiteral(part.literal)) return undefined
    keys.push(part.literal.text)
  }
  return keys
}

function isPrivate(member: Member): boolean {
  const modifiers = ts.canHaveModifiers(member) ? (ts.getModifiers(member) ?? []) : []
  return (
    modifiers.some((modifier) => modifier.kind === ts.SyntaxKind.PrivateKeyword) ||
    (member.name !== undefined && ts.isPrivateIdentifier(member.name))
  )
}

function memberName(member: Member, file: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(member) || ts.isConstructSignatureDeclaration(member)) return 'constructor'
  if (ts.isCallSignatureDeclaration(member)) return '()'
  if (ts.isIndexSignatureDeclaration(member)) return '[index]'
  const name = member.name?.getText(file) ?? '?'
  const isStatic = ts.canHaveModifiers(member) && (ts.getModifiers(member) ?? []).some((m) => m.kind === ts.SyntaxKind.StaticKeyword)
  return isStatic ? `static ${name}` : name
}

function signatureOf(node: ts.Node, file: ts.SourceFile): Signature | undefined {
  if (!(
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isMethodSignature(node) ||
    ts.isConstructorDeclaration(node)
  )) {
    return undefined
  }
  return {
    typeParameters: (node.typeParameters ?? []).map((parameter) => print(parameter, file)).join(', '),
    parameters: node.parameters.map((parameter) => ({
      text: print(parameter, file),
      optional: parameter.questionToken !== undefined || parameter.initializer !== undefined || parameter.dotDotDotToken !== undefined,
    })),
    returns: node.type === undefined ? '' : print(node.type, file),
  }
}
