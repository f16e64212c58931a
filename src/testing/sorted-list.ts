/**
 * A list kept in one order for reading, sorted lazily: appending is O(1), and reading sorts only
 * when an append broke the order since the last read. Seeds usually arrive in order (a million
 * generated messages are never re-sorted), while token issuance appends users one at a time.
 *
 * @module
 */
export class SortedList<T> {
  readonly #compare: (a: T, b: T) => number
  readonly #items: T[] = []
  #sorted = true

  constructor(compare: (a: T, b: T) => number) {
    this.#compare = compare
  }

  /** Appends one item. */
  add(item: T): void {
    const last = this.#items.at(-1)
    if (this.#sorted && last !== undefined && this.#compare(last, item) > 0) this.#sorted = false
    this.#items.push(item)
  }

  /** The items in order (a live view: do not mutate it). */
  items(): readonly T[] {
    if (!this.#sorted) {
      this.#items.sort(this.#compare)
      this.#sorted = true
    }
    return this.#items
  }

  /**
   * Removes one item (by identity); returns whether it was there. O(n): the fake removes records
   * one at a time, between test runs, never in a hot path.
   */
  remove(item: T): boolean {
    const index = this.#items.indexOf(item)
    if (index < 0) return false
    // Removing keeps a sorted list sorted, and an unsorted one still needs its sort.
    this.#items.splice(index, 1)
    return true
  }

  /** Number of items. */
  get length(): number {
    return this.#items.length
  }
}
