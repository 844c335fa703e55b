/**
 * A first-in-first-out queue with O(1) push and shift. The ready queue may hold up to 100 000
 * inputs (config bound), where `Array.prototype.shift` would copy the whole array per pick.
 */
export class Fifo<T> {
  #items: Array<T | undefined> = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  peek(): T | undefined {
    return this.length > 0 ? this.#items[this.#head] : undefined;
  }

  shift(): T | undefined {
    if (this.length === 0) return undefined;
    const item = this.#items[this.#head];
    // Release the reference so a long-lived queue does not keep finished inputs alive.
    this.#items[this.#head] = undefined;
    this.#head++;
    // Compact once the dead prefix dominates, keeping shifts amortised O(1).
    if (this.#head > 64 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  /** Empties the queue and returns what it held, oldest first. */
  drain(): T[] {
    const items = this.#items.slice(this.#head) as T[];
    this.#items = [];
    this.#head = 0;
    return items;
  }
}
