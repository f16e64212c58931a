// Whether two API items whose texts differ still declare the same type, written another way
// (api-report.ts asks before it calls a changed item breaking).
//
// Each item is printed in a canonical form, within its own report:
//   - a type alias or interface that the other report does not declare is spelled out where it is
//     used, its type parameters bound to the arguments (or defaults): 0.3's `role: MessageRole`
//     and 0.4's `role: 'user' | 'assistant' | (string & {})`, or `Promise<WithResponse<T>>` and
//     `Promise<{ readonly data: T; readonly response: APIResponse }>`. An interface is its members
//     as an object type, intersected with what it extends (`interface O extends ErrorOptions { x }`
//     is `ErrorOptions & { x }`);
//   - `ConstructorParameters<typeof C>[n]` is the report's own `C.constructor`'s n-th parameter;
//   - unions are flattened and sorted, intersections flattened, an object type's members sorted.
// A name both reports declare is never spelled out: if it changed, its own item says so, and an
// item that still uses it is not changed by that.
// Limits (on the side of calling a change breaking): an interface and the object type it spells
// out are taken as one type, though only the second is assignable to an index signature; nothing
// else is evaluated (`Pick<X, 'a'>` is not `{ a: X['a'] }` here).
import ts from 'typescript'
import type { ApiItem } from './api-report.ts'

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed })

/** `a` of `aItems` and `b` of `bItems` (two reports, in either order) print the same canonically. */
export function sameType(a: ApiItem, aItems: ReadonlyMap<string, ApiItem>, b: ApiItem, bItems: ReadonlyMap<string, ApiItem>): boolean {
  const left = canonical(a, aItems, bItems)
  return left !== undefined && left === canonical(b, bItems, aItems)
}

/** The item's text with the names `other` lacks spelled out and its types put in order; undefined without a node. */
function canonical(item: ApiItem, items: ReadonlyMap<string, ApiItem>, other: ReadonlyMap<string, ApiItem>): string | undefined {
  const { node, file } = item
  if (node === undefined || file === undefined) return undefined
  const print = (n: ts.Node): string => printer.printNode(ts.EmitHint.Unspecified, n, file)
  const spelledOut = (name: string): ts.TypeAliasDeclaration | ts.InterfaceDeclaration | undefined => {
    if (other.has(name)) return undefined
    const declaration = items.get(name)?.node
    return declaration !== undefined && (ts.isTypeAliasDeclaration(declaration) || ts.isInterfaceDeclaration(declaration))
      ? declaration
      : undefined
  }
  const result = ts.transform(node, [
    (context) => (root) => {
      const { factory } = context
      const expanding = new Set<string>()
      // Type parameters of the declarations being spelled out, bound to their (canonical) arguments.
      const bindings: Map<string, ts.TypeNode>[] = []
      const bound = (name: string): ts.TypeNode | undefined => {
        for (let i = bindings.length - 1; i >= 0; i--) {
          const type = bindings[i]?.get(name)
          if (type !== undefined) return type
        }
        return undefined
      }
      const visit = (n: ts.Node): ts.Node => {
        if (ts.isTypeReferenceNode(n) && ts.isIdentifier(n.typeName)) {
          const name = n.typeName.text
          const binding = n.typeArguments === undefined ? bound(name) : undefined
          if (binding !== undefined) return binding
          const declaration = spelledOut(name)
          if (declaration !== undefined && !expanding.has(name)) {
            const args = (n.typeArguments ?? []).map((arg) => visit(arg) as ts.TypeNode)
            const scope = new Map<string, ts.TypeNode>()
            for (const [i, parameter] of (declaration.typeParameters ?? []).entries()) {
              const arg = args[i] ?? (parameter.default === undefined ? undefined : (visit(parameter.default) as ts.TypeNode))
              scope.set(parameter.name.text, arg ?? factory.createKeywordTypeNode(ts.SyntaxKind.UnknownKeyword))
            }
            expanding.add(name)
            bindings.push(scope)
            const body = visit(bodyOf(declaration, factory))
            bindings.pop()
            expanding.delete(name)
            return body
          }
        }
        if (ts.isIndexedAccessTypeNode(n)) {
          const parameter = constructorParameter(n, items, factory)
          if (parameter !== undefined) return visit(parameter)
        }
        const visited = ts.visitEachChild(n, visit, context)
        if (ts.isUnionTypeNode(visited)) {
          const types = new Map<string, ts.TypeNode>()
          for (const type of flatten(visited.types, ts.isUnionTypeNode)) types.set(print(type), type)
          const sorted = [...types.keys()].sort().map((key) => types.get(key) as ts.TypeNode)
          return sorted.length === 1 ? (sorted[0] as ts.TypeNode) : factory.createUnionTypeNode(sorted)
        }
        if (ts.isIntersectionTypeNode(visited)) return factory.createIntersectionTypeNode(flatten(visited.types, ts.isIntersectionTypeNode))
        if (ts.isTypeLiteralNode(visited)) {
          const members = [...visited.members].map((member) => ({ member, text: print(member) }))
          members.sort((x, y) => (x.text < y.text ? -1 : x.text > y.text ? 1 : 0))
          return factory.createTypeLiteralNode(members.map(({ member }) => member))
        }
        return visited
      }
      return visit(root)
    },
  ])
  try {
    const transformed = result.transformed[0] as ts.Node
    let text = print(transformed)
    if (item.header === true) {
      const open = ts.isTypeAliasDeclaration(transformed) ? text.indexOf('= {') + 1 : text.indexOf('{')
      text = text.slice(0, open)
    }
    return text.replace(/\s+/g, ' ').trim()
  } finally {
    result.dispose()
  }
}

/** What a type alias stands for; an interface as its members, intersected with what it extends. */
function bodyOf(declaration: ts.TypeAliasDeclaration | ts.InterfaceDeclaration, factory: ts.NodeFactory): ts.TypeNode {
  if (ts.isTypeAliasDeclaration(declaration)) return declaration.type
  const members = factory.createTypeLiteralNode(declaration.members)
  const bases = (declaration.heritageClauses ?? [])
    .filter((clause) => clause.token === ts.SyntaxKind.ExtendsKeyword)
    .flatMap((clause) => clause.types)
    .map((type) => (ts.isIdentifier(type.expression) ? factory.createTypeReferenceNode(type.expression, type.typeArguments) : undefined))
  if (bases.some((base) => base === undefined)) return factory.createTypeReferenceNode(declaration.name) // not spelled out
  return bases.length === 0 ? members : factory.createIntersectionTypeNode([...(bases as ts.TypeNode[]), members])
}

/** `ConstructorParameters<typeof C>[n]`: `C.constructor`'s n-th parameter type (`| undefined` when optional), up C's bases. */
function constructorParameter(
  node: ts.IndexedAccessTypeNode,
  items: ReadonlyMap<string, ApiItem>,
  factory: ts.NodeFactory,
): ts.TypeNode | undefined {
  const { objectType, indexType } = node
  if (!ts.isTypeReferenceNode(objectType) || !ts.isIdentifier(objectType.typeName) || objectType.typeName.text !== 'ConstructorParameters')
    return undefined
  const query = objectType.typeArguments?.[0]
  if (query === undefined || !ts.isTypeQueryNode(query) || !ts.isIdentifier(query.exprName)) return undefined
  if (!ts.isLiteralTypeNode(indexType) || !ts.isNumericLiteral(indexType.literal)) return undefined
  const index = Number(indexType.literal.text)
  let owner: string | undefined = query.exprName.text
  for (let depth = 0; depth < 10 && owner !== undefined; depth++) {
    const constructor = items.get(`${owner}.constructor`)?.node
    if (constructor !== undefined && ts.isConstructorDeclaration(constructor)) {
      const parameter = constructor.parameters[index]
      if (parameter?.type === undefined || parameter.dotDotDotToken !== undefined) return undefined
      return parameter.questionToken === undefined
        ? parameter.type
        : factory.createUnionTypeNode([parameter.type, factory.createKeywordTypeNode(ts.SyntaxKind.UndefinedKeyword)])
    }
    if (items.has(`${owner}.constructor`)) return undefined // overloaded: not one parameter list
    owner = items.get(owner)?.bases?.[0]?.name
  }
  return undefined
}

/** Nested unions (or intersections), parenthesized or not, as one list. */
function flatten(
  types: readonly ts.TypeNode[],
  same: (node: ts.Node) => node is ts.UnionTypeNode | ts.IntersectionTypeNode,
): ts.TypeNode[] {
  return types.flatMap((type) => {
    const inner = ts.isParenthesizedTypeNode(type) ? type.type : type
    return same(inner) ? flatten(inner.types, same) : [type]
  })
}
