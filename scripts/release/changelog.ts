// Reads CHANGELOG.md (Keep a Changelog): its version sections, their `### Added` / `### Changed` /
// ... headings and their entries, and the APIs a "Breaking" or "Deprecated" entry names.
//
// How an entry names what it breaks (DEVELOPERS.md, "Releases"): each API it breaks, in backticks,
// as the API report spells it: `Name` for a whole export, `Name.member` for one member
// (`CustomerUsers.list`, `ClientOptions.timeout`, `ChatServiceClient.constructor`), anywhere in the
// entry, by custom right after the word: "- Breaking (`CustomerUsers.list`): ...". Naming an
// export covers all of its members; a generic may be written with its type parameters
// (`WithResponse<T>`). Other code spans (`page: 2`, `{ limit }`) name nothing.

/** One `- ` list item (its continuation lines joined). */
export interface Entry {
  /** The heading it is under: `Added`, `Changed`, `Deprecated`, `Removed`, `Fixed`, `Security`. */
  readonly heading: string
  readonly text: string
  /** 1-based line of its first line in the file. */
  readonly line: number
  /** Starts with "Breaking" (also bold, "**Breaking"). */
  readonly breaking: boolean
  /** The API names in its backticks (see the file's comment). */
  readonly names: readonly string[]
}

/** One `## [...]` section. */
export interface Section {
  /** `Unreleased` or a version such as `0.3.0`. */
  readonly title: string
  /** The date after the heading (`## [0.3.0] - 2026-11-26`), if any. */
  readonly date: string | undefined
  readonly line: number
  readonly entries: readonly Entry[]
}

const API_NAME = /^[A-Za-z_$][\w$]*(\.(static )?([A-Za-z_$][\w$]*|constructor|\[Symbol\.\w+\]|\(\)|\[index\]))*$/

/** The sections of a changelog, newest (top) first. */
export function parseChangelog(markdown: string): Section[] {
  const lines = markdown.replace(/\r\n/g, '\n').split('\n')
  const sections: { title: string; date: string | undefined; line: number; entries: Entry[] }[] = []
  let heading = ''
  let current: { lines: string[]; line: number; heading: string } | undefined
  const flush = (): void => {
    const section = sections.at(-1)
    if (current !== undefined && section !== undefined) {
      const text = current.lines.join(' ').replace(/\s+/g, ' ').trim()
      section.entries.push({
        heading: current.heading,
        text,
        line: current.line,
        breaking: /^(\*\*)?Breaking\b/.test(text),
        names: apiNames(text),
      })
    }
    current = undefined
  }
  lines.forEach((line, index) => {
    const version = /^## \[([^\]]+)\](?:\s+-\s+(\S+))?/.exec(line)
    if (version !== null) {
      flush()
      sections.push({ title: version[1] ?? '', date: version[2], line: index + 1, entries: [] })
      heading = ''
      return
    }
    const sub = /^### (.+?)\s*$/.exec(line)
    if (sub !== null) {
      flush()
      heading = sub[1] ?? ''
      return
    }
    if (line.startsWith('- ')) {
      flush()
      current = { lines: [line.slice(2)], line: index + 1, heading }
    } else if (current !== undefined && /^\s+\S/.test(line)) {
      current.lines.push(line.trim())
    } else if (line.trim() === '' || !/^\s/.test(line)) {
      flush()
    }
  })
  flush()
  return sections
}

/**
 * The API names an entry's code spans hold (`customerUsers.list()` → `customerUsers.list`; a generic
 * with its type arguments names the generic: `WithResponse<T>` → `WithResponse`).
 */
export function apiNames(text: string): string[] {
  const names: string[] = []
  for (const match of text.matchAll(/`([^`]+)`/g)) {
    const span = (match[1] ?? '')
      .trim()
      .replace(/\(\)$/, '')
      .replace(/^([A-Za-z_$][\w$.]*)<.*>$/, '$1')
    if (API_NAME.test(span)) names.push(span)
  }
  return names
}

/**
 * Whether `key` (an API item, `Name` or `Name.member`) is among `names`: named itself, or its
 * export named whole.
 */
export function names(key: string, named: Iterable<string>): boolean {
  const top = key.split('.')[0]
  for (const name of named) if (name === key || name === top) return true
  return false
}
