/**
 * The model parser: a dependency-parser ONNX model (docs/memory-parser.md) run in a worker
 * thread, started on the first sentence that needs it. The house keeps working whatever happens
 * to the model: if it cannot be loaded (missing file, bad parser.json, wrong shapes) or its worker
 * dies, one warning is logged and the rule parser takes over for good; a sentence the model fails
 * on, one longer than max_words, or one parsed after close() is parsed by rules. Each parse says
 * which parser produced it, so the extractor scores it in the right range.
 */
import { ModelWorkerClient, workerEntry } from '../embed/model-worker-client.js';
import type { Logger } from '../log/logger.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import type { DependencyArc, DependencyParse, DependencyParser } from './dependency-parser.js';
import type { ParseAnswer, ParseRequest, ParserReady, ParserWorkerInit } from './onnx-parser-protocol.js';
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

type ParserWorker = ModelWorkerClient<ParserReady, ParseRequest, ParseAnswer>;

export class OnnxDependencyParser implements DependencyParser {
  readonly source = 'model' as const;
  readonly #dir: string;
  readonly #log: OnnxDependencyParserOptions['log'];
  readonly #threads: number;
  readonly #rules = new RuleDependencyParser();
  #state: OnnxParserState = 'idle';
  #worker: ParserWorker | undefined;
  #loading: Promise<Ready> | undefined;
  #failure: HomeAgentError | undefined;
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
    const exitCode = this.#worker?.exitCode;
    if (exitCode !== undefined) status.exitCode = exitCode;
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
    const workerData: ParserWorkerInit = { dir: this.#dir, threads: this.#threads };
    const worker: ParserWorker = ModelWorkerClient.spawn({
      entry: workerEntry(import.meta.url, 'onnx-parser-worker'),
      workerData,
      name: 'the dependency parser worker',
      closedError,
      stoppedError: (stop) =>
        new HomeAgentError('HA_ERR_EMBED_FAILED', `the dependency parser worker for ${this.#dir} stopped (${stop.why})`),
      onStopped: (error) => this.#fail(error, 'the dependency parser model stopped working; the rule parser is used instead'),
    });
    this.#worker = worker;
    return worker.ready.then(
      (ready) => {
        this.#log.info(
          { dir: this.#dir, words: ready.words, labels: ready.labels, max_words: ready.maxWords },
          'dependency parser model loaded',
        );
        // Closed in between: the sentence waiting for this goes to the rules through #request.
        if (!this.#closing) this.#state = 'ready';
        return { maxWords: ready.maxWords };
      },
      (error: HomeAgentError) => {
        if (!this.#closing) this.#fail(error, 'the dependency parser model cannot be loaded; the rule parser is used instead');
        throw error;
      },
    );
  }

  #fail(error: HomeAgentError, message: string): void {
    this.#state = 'failed';
    this.#failure = error;
    this.#log.warn({ dir: this.#dir, code: error.code, error: error.message }, message);
  }

  async #request(words: readonly TaggedWord[]): Promise<DependencyArc[]> {
    const worker = this.#worker;
    if (worker === undefined) throw this.#failure ?? closedError();
    const answer = await worker.request((id) => ({ t: 'parse', id, words: words.map((w) => w.word), tags: words.map((w) => w.tag) }));
    return answer.arcs;
  }

  async #close(): Promise<void> {
    this.#state = 'closed';
    await this.#worker?.close();
  }
}

function closedError(): HomeAgentError {
  return new HomeAgentError('HA_ERR_EMBED_CLOSED', 'the dependency parser was closed');
}
