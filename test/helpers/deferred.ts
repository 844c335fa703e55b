/** A promise with its resolve/reject exposed, for controlling test steps without timing. */
export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Lets everything already queued run (pending promise reactions, then one event-loop turn). Not a
 * sleep: it waits for no time, only for work already scheduled, which is how "nothing else
 * happened" is shown.
 */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
