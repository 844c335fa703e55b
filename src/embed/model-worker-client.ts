/**
 * The main-thread half of a model worker (model-worker-host.ts is the other): starts the worker,
 * waits for its model to load, sends requests with ids and matches the answers, keeps the process
 * alive only while work is in flight, and on close asks the worker to release its model
 * (terminating it if it does not within a grace period, or at once while it still loads). The
 * embedder and the dependency parser keep what differs: their messages, their errors, and what a
 * dead worker means to them.
 */
import { Worker } from 'node:worker_threads';
import { HomeAgentError } from '../shared/errors.js';
import type {
  FromModelWorker,
  LoadFailed,
  ModelAnswer,
  ModelReady,
  ModelRequest,
  RequestFailed,
  ToModelWorker,
} from './model-worker-protocol.js';
import { abortedError } from './vector-math.js';

/** How long close() waits for the worker to release its model before terminating it. */
const CLOSE_GRACE_MS = 2000;

/** How a worker stopped without being asked. */
export interface WorkerStop {
  /** The error's message, or `exit code N`. */
  why: string;
  /** Set when the worker threw. */
  error?: Error;
  /** Set when the worker exited. */
  exitCode?: number;
}

export interface ModelWorkerOptions {
  /** The worker's entry module (see {@link workerEntry}). */
  entry: URL;
  workerData: unknown;
  /** Names the worker in the error for a message it should not have sent yet ('the embedding worker'). */
  name: string;
  /** The error of every request made or pending once close() was called. */
  closedError(): HomeAgentError;
  /** The error for a worker that stopped without being asked, while loading or after. */
  stoppedError(stop: WorkerStop, loading: boolean): HomeAgentError;
  /** Told once when a loaded worker stopped without being asked, before its pending requests fail. */
  onStopped?(error: HomeAgentError): void;
  /** Cancels loading: `ready` rejects with the abort error and the worker is stopped. */
  signal?: AbortSignal;
}

type State = 'loading' | 'ready' | 'failed' | 'closed';

interface Settle<T> {
  resolve(value: T): void;
  reject(error: HomeAgentError): void;
}

/** The entry `name` next to `moduleUrl`: the .ts file from src/ (tests, with a TypeScript loader), the .js from dist/. */
export function workerEntry(moduleUrl: string, name: string): URL {
  return new URL(moduleUrl.endsWith('.ts') ? `./${name}.ts` : `./${name}.js`, moduleUrl);
}

export class ModelWorkerClient<Ready extends ModelReady, Request extends ModelRequest, Answer extends ModelAnswer> {
  /** The worker's ready message; rejects with why the model could not be loaded (or closed, aborted). */
  readonly ready: Promise<Ready>;
  readonly #options: ModelWorkerOptions;
  readonly #worker: Worker;
  readonly #exited: Promise<void>;
  #state: State = 'loading';
  #running = true;
  #exitCode: number | undefined;
  #failure: HomeAgentError | undefined;
  #loader: Settle<Ready> | undefined;
  readonly #pending = new Map<number, Settle<Answer>>();
  #nextId = 0;
  #closing: Promise<void> | undefined;

  private constructor(options: ModelWorkerOptions, worker: Worker) {
    this.#options = options;
    this.#worker = worker;
    this.ready = new Promise<Ready>((resolve, reject) => {
      this.#loader = { resolve, reject };
    });
    // An owner that closes before it asks for `ready` must not cause an unhandled rejection.
    this.ready.catch(() => undefined);
    this.#exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  }

  /** Starts the worker; it holds the process open while it loads. */
  static spawn<Ready extends ModelReady, Request extends ModelRequest, Answer extends ModelAnswer>(
    options: ModelWorkerOptions,
  ): ModelWorkerClient<Ready, Request, Answer> {
    const worker = new Worker(options.entry, { workerData: options.workerData });
    const client = new ModelWorkerClient<Ready, Request, Answer>(options, worker);
    worker.on('message', (message: FromModelWorker<Ready, Answer>) => client.#onMessage(message));
    worker.on('error', (error) => client.#stopped({ why: error.message, error }));
    worker.on('exit', (exitCode) => client.#stopped({ why: `exit code ${exitCode}`, exitCode }));
    const signal = options.signal;
    if (signal) {
      const onAbort = () => client.#loadFailed(abortedError(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      const done = () => signal.removeEventListener('abort', onAbort);
      client.ready.then(done, done);
    }
    return client;
  }

  /** The worker's exit code, once it has exited. */
  get exitCode(): number | undefined {
    return this.#exitCode;
  }

  /** Why requests fail now (closed, not loaded, stopped); undefined while the worker loads or works. */
  get failure(): HomeAgentError | undefined {
    return this.#state === 'closed' ? this.#options.closedError() : this.#failure;
  }

  /** Sends the request `make` builds with its id; resolves with the worker's answer to it. */
  request(make: (id: number) => Request, signal?: AbortSignal): Promise<Answer> {
    if (this.#state !== 'ready') {
      return Promise.reject(this.failure ?? new HomeAgentError('HA_ERR_EMBED_FAILED', `${this.#options.name} is still loading`));
    }
    const worker = this.#worker;
    return new Promise<Answer>((resolve, reject) => {
      const id = ++this.#nextId;
      const onAbort = () => {
        this.#settle(id);
        reject(abortedError(signal as AbortSignal));
      };
      this.#pending.set(id, {
        resolve: (answer) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(answer);
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      // Only a worker with work in flight keeps the process alive.
      if (this.#pending.size === 1) worker.ref();
      worker.postMessage(make(id) satisfies ToModelWorker<Request>);
    });
  }

  /** Fails what is pending with closedError() and stops the worker; resolves once it has exited. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    const wasReady = this.#state === 'ready';
    const error = this.#options.closedError();
    this.#state = 'closed';
    this.#failAll(error);
    this.#takeLoader()?.reject(error);
    if (!this.#running) return;
    const worker = this.#worker;
    worker.ref();
    if (wasReady) {
      const timer = setTimeout(() => void worker.terminate(), CLOSE_GRACE_MS);
      worker.postMessage({ t: 'close' } satisfies ToModelWorker<Request>);
      await this.#exited;
      clearTimeout(timer);
    } else {
      // The worker listens only once its model is loaded, so there is no one to ask.
      await worker.terminate();
      await this.#exited;
    }
  }

  #onMessage(message: FromModelWorker<Ready, Answer>): void {
    if (this.#state === 'loading') {
      if (message.t === 'ready') {
        this.#state = 'ready';
        if (this.#pending.size === 0) this.#worker.unref();
        this.#takeLoader()?.resolve(message as Ready);
      } else if (message.t === 'load_failed') {
        const failed = message as LoadFailed;
        this.#loadFailed(new HomeAgentError(failed.code, failed.message));
      } else {
        this.#loadFailed(new HomeAgentError('HA_ERR_EMBED_MODEL_LOAD', `${this.#options.name} sent ${message.t} before it was ready`));
      }
      return;
    }
    // After close or a failure the pending requests are gone; a late answer is dropped.
    if (this.#state !== 'ready' || message.t === 'ready' || message.t === 'load_failed' || message.t === 'closed') return;
    if (message.t === 'failed') {
      const failed = message as RequestFailed;
      this.#settle(failed.id)?.reject(new HomeAgentError(failed.code, failed.message));
    } else {
      const answer = message as Answer;
      this.#settle(answer.id)?.resolve(answer);
    }
  }

  #loadFailed(error: HomeAgentError): void {
    if (this.#state !== 'loading') return;
    this.#state = 'failed';
    this.#failure = error;
    if (this.#running) void this.#worker.terminate();
    this.#takeLoader()?.reject(error);
  }

  /** The worker threw or exited on its own: while loading that is a load failure, later the model is gone. */
  #stopped(stop: WorkerStop): void {
    if (stop.exitCode !== undefined) {
      this.#running = false;
      this.#exitCode = stop.exitCode;
    }
    if (this.#state === 'loading') {
      this.#loadFailed(this.#options.stoppedError(stop, true));
      return;
    }
    if (this.#state !== 'ready') return;
    const error = this.#options.stoppedError(stop, false);
    this.#state = 'failed';
    this.#failure = error;
    this.#options.onStopped?.(error);
    this.#failAll(error);
  }

  #takeLoader(): Settle<Ready> | undefined {
    const loader = this.#loader;
    this.#loader = undefined;
    return loader;
  }

  /** Forgets a request; its answer, if it still comes, is dropped. */
  #settle(id: number): Settle<Answer> | undefined {
    const pending = this.#pending.get(id);
    this.#pending.delete(id);
    // After close the worker stays referenced until it has exited.
    if (this.#pending.size === 0 && this.#state === 'ready') this.#worker.unref();
    return pending;
  }

  #failAll(error: HomeAgentError): void {
    const all = [...this.#pending.values()];
    this.#pending.clear();
    for (const pending of all) pending.reject(error);
  }
}
