/**
 * The model parser: a dependency-parser ONNX model (docs/memory-parser.md) run in a worker
 * thread, started on the first sentence that needs it. The house keeps working whatever happens
 * to the model: if it cannot be loaded (missing file, bad parser.json, wrong shapes) or its worker
 * dies, one warning is logged and the rule parser takes over for good; a sentence the model fails
 * on, one longer than max_words, or one parsed after close() is parsed by rules. Each parse says
 * which parser produced it, so the extractor scores it in the right range.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from '../log/logger.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import type { DependencyArc, DependencyParse, DependencyParser } from './dependency-parser.js';
import type { FromParserWorker, ParserWorkerInit, ToParserWorker } from './onnx-parser-protocol.js';
import { RuleDependencyParser } from './rule-dependency-parser.js';
import type { TaggedWord } from './types.js';

export interface OnnxDependencyParserOptions {
  /** The model directory (core.agent.onnx_model_path). */
  dir: string;
  log: Pick<Logger, 'debug' | 'info' | 'warn'>;
  /** ONNX Runtime intra-op threads (default 1: one sentence is a small job, and the Pi has few cores). */
  threads?: number;
}

export type OnnxParserState = 'idle' | 'loading' | 'ready' | 'failed' | 'closed';

export interface OnnxParserStatus {
  state: OnnxParserState;
  /** Why the model is not used (state `failed`). */
  error?: HomeAgentError;
  /** The worker's exit code, once it has exited. */
  exitCode?: number;
}

interface Ready {
  maxWords: number;
}

interface Loader {
  resolve(ready: Ready): void;
  reject(error: HomeAgentError): void;
}

interface Pending {
  resolve(arcs: DependencyArc[]): void;
  reject(error: HomeAgentError): void;
}

/** How long close() waits for the worker to release the model before terminating it. */
const CLOSE_GRACE_MS = 2000;

export class OnnxDependencyParser implements DependencyParser {
  readonly source = 'model' as const;
  readonly #dir: string;
  readonly #log: OnnxDependencyParserOptions['log'];
  readonly #threads: number;
  readonly #rules = new RuleDependencyParser();
  #state: OnnxParserState = 'idle';
  #worker: Worker | undefined;
  #loading: Promise<Ready> | undefined;
  #loader: Loader | undefined;
  #failure: HomeAgentError | undefined;
  #exitCode: number | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  #closing: Promise<void> | undefined;
  #warnedSentence = false;

  constructor(options: OnnxDependencyParserOptions) {
    this.#dir = options.dir;
    this.#log = options.log;
    this.#threads = options.threads ?? 1;
  }

  get status(): OnnxParserStatus {
    const status: OnnxParserStatus = { state: this.#state };
    if (this.#failure !== undefined && this.#state === 'failed') status.error = this.#failure;
    if (this.#exitCode !== undefined) status.exitCode = this.#exitCode;
    return status;
  }

  /**
   * Loads the model now instead of on the first sentence. Rejects with the load error (a
   * HomeAgentError naming the file and the problem); parse() never does, it falls back to rules.
   */
  async load(): Promise<void> {
    await this.#load();
  }

  async parse(words: readonly TaggedWord[]): Promise<DependencyParse> {
    if (words.length === 0) return { words: [], arcs: [], source: this.source };
    let ready: Ready;
    try {
      ready = await this.#load();
    } catch {
      // Logged once where it happened; from now on the rules parse everything.
      return this.#rules.parse(words);
    }
    if (words.length > ready.maxWords) {
      this.#log.debug({ words: words.length, max_words: ready.maxWords }, 'sentence longer than the parser model takes; rules parse it');
      return this.#rules.parse(words);
    }
    try {
      const arcs = await this.#request(words);
      return { words: words.map((w) => ({ ...w })), arcs, source: this.source };
    } catch (error) {
      if (this.#state === 'ready') {
        const fields = { error: describeError(error), words: words.length };
        if (this.#warnedSentence) this.#log.debug(fields, 'the parser model failed on a sentence; rules parse it');
        else this.#log.warn(fields, 'the parser model failed on a sentence; rules parse it (further failures are logged at debug level)');
        this.#warnedSentence = true;
      }
      return this.#rules.parse(words);
    }
  }

  /** Stops the worker after it released the model. Sentences still waiting are parsed by rules. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  #load(): Promise<Ready> {
    if (this.#closing) return Promise.reject(closedError());
    if (this.#failure) return Promise.reject(this.#failure);
    this.#loading ??= this.#start();
    return this.#loading;
  }

  #start(): Promise<Ready> {
    this.#state = 'loading';
    const init: ParserWorkerInit = { dir: this.#dir, threads: this.#threads };
    // From src/ (tests, with a TypeScript loader) the worker is the .ts file, from dist/ the .js.
    const self = import.meta.url;
    const worker = new Worker(new URL(self.endsWith('.ts') ? './onnx-parser-worker.ts' : './onnx-parser-worker.js', self), {
      workerData: init,
    });
    this.#worker = worker;
    worker.on('message', (message: FromParserWorker) => this.#onMessage(worker, message));
    worker.on('error', (error) => this.#died(worker, error.message));
    worker.on('exit', (code) => {
      this.#exitCode = code;
      this.#died(worker, `exit code ${code}`);
    });
    return new Promise<Ready>((resolve, reject) => {
      this.#loader = { resolve, reject };
    }).catch((error: HomeAgentError) => {
      if (!this.#closing) this.#fail(error, 'the dependency parser model cannot be loaded; the rule parser is used instead');
      throw error;
    });
  }

  #onMessage(worker: Worker, message: FromParserWorker): void {
    if (worker !== this.#worker) return;
    switch (message.t) {
      case 'ready':
        this.#log.info(
          { dir: this.#dir, words: message.words, labels: message.labels, max_words: message.maxWords },
          'dependency parser model loaded',
        );
        this.#state = 'ready';
        this.#settleLoader()?.resolve({ maxWords: message.maxWords });
        if (this.#pending.size === 0) worker.unref();
        break;
      case 'load_failed':
        this.#worker = undefined;
        void worker.terminate();
        this.#settleLoader()?.reject(new HomeAgentError(message.code, message.message));
        break;
      case 'parsed':
        this.#settle(message.id)?.resolve(message.arcs);
        break;
      case 'failed':
        this.#settle(message.id)?.reject(new HomeAgentError(message.code, message.message));
        break;
      case 'closed':
        break;
    }
  }

  /** The worker stopped without being asked: while loading that is a load failure, later the model is gone. */
  #died(worker: Worker, why: string): void {
    if (worker !== this.#worker || this.#closing) return;
    this.#worker = undefined;
    const error = new HomeAgentError('HA_ERR_EMBED_FAILED', `the dependency parser worker for ${this.#dir} stopped (${why})`);
    const loader = this.#settleLoader();
    if (loader) {
      loader.reject(error);
      return;
    }
    this.#fail(error, 'the dependency parser model stopped working; the rule parser is used instead');
    this.#failAll(error);
  }

  #fail(error: HomeAgentError, message: string): void {
    this.#state = 'failed';
    this.#failure = error;
    this.#log.warn({ dir: this.#dir, code: error.code, error: error.message }, message);
  }

  #settleLoader(): Loader | undefined {
    const loader = this.#loader;
    this.#loader = undefined;
    return loader;
  }

  #request(words: readonly TaggedWord[]): Promise<DependencyArc[]> {
    const worker = this.#worker;
    if (worker === undefined) return Promise.reject(this.#failure ?? closedError());
    return new Promise<DependencyArc[]>((resolve, reject) => {
      const id = ++this.#nextId;
      this.#pending.set(id, { resolve, reject });
      // Only a worker with work in flight keeps the process alive.
      if (this.#pending.size === 1) worker.ref();
      const message: ToParserWorker = { t: 'parse', id, words: words.map((w) => w.word), tags: words.map((w) => w.tag) };
      worker.postMessage(message);
    });
  }

  #settle(id: number): Pending | undefined {
    const pending = this.#pending.get(id);
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#worker?.unref();
    return pending;
  }

  #failAll(error: HomeAgentError): void {
    const all = [...this.#pending.values()];
    this.#pending.clear();
    for (const pending of all) pending.reject(error);
  }

  async #close(): Promise<void> {
    const error = closedError();
    const wasReady = this.#state === 'ready';
    this.#state = 'closed';
    this.#failAll(error);
    this.#settleLoader()?.reject(error);
    const worker = this.#worker;
    this.#worker = undefined;
    if (!worker) return;
    worker.ref();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    if (wasReady) {
      const timer = setTimeout(() => void worker.terminate(), CLOSE_GRACE_MS);
      worker.postMessage({ t: 'close' } satisfies ToParserWorker);
      await exited;
      clearTimeout(timer);
    } else {
      // Still loading: the worker only listens once the model is loaded, so there is no one to ask.
      await worker.terminate();
      await exited;
    }
  }
}

function closedError(): HomeAgentError {
  return new HomeAgentError('HA_ERR_EMBED_CLOSED', 'the dependency parser was closed');
}
