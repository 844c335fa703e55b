/**
 * `homeagentctl models`: installs and lists local models in `<data>/models`: sentence-embedding
 * models (memory vectors) and dependency-parser models (reading facts). Works on the files
 * directly, without the daemon (a download can take minutes and the daemon may not run); the
 * daemon uses a model once its configuration names it and it has been restarted.
 */
import { isAbsolute, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { DownloadProgress } from '../embed/model-download.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import { EXIT_CODES } from '../shared/exit-codes.js';
import {
  DEFAULT_MODEL_MAX_BYTES,
  type InstalledModel,
  installModel,
  listModels,
  type ModelDescription,
  type ModelKind,
  type ModelListing,
} from './model-installer.js';

export const MODELS_USAGE = `usage: homeagentctl models list [--data-dir DIR] [--json]
       homeagentctl models install <DIR|FILE|URL> [--sha256 HEX] [--name NAME] [--max-mb N]
                                   [--no-check] [--data-dir DIR] [--json]

  list      installed models with their kind (embedder or parser), details, size and source
  install   copy a model directory, or unpack a .tar.gz/.zip file or http(s) URL, into
            <data>/models/<name>. The directory (or archive root) holds either a
            sentence-embedding model (model.onnx, tokenizer.json, embedder.json) or a
            dependency-parser model (model.onnx, parser.json). --sha256 checks the archive, or
            model.onnx of a directory. The model is test-loaded before it is moved into place
            (--no-check skips). The output says which setting to change to use it.

The data directory is --data-dir, $HOMEAGENT_DATA_DIR or ./data.`;

export interface ModelsIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown; isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
}

const defaultIo = (): ModelsIo => ({ stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() });

class UsageError extends Error {}

/** Runs `homeagentctl models <argv…>`; resolves with the exit code. */
export async function runModels(argv: string[], io: ModelsIo = defaultIo(), signal?: AbortSignal): Promise<number> {
  let values: {
    'data-dir'?: string;
    sha256?: string;
    name?: string;
    'max-mb'?: string;
    json?: boolean;
    'no-check'?: boolean;
    help?: boolean;
  };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: {
        'data-dir': { type: 'string' },
        sha256: { type: 'string' },
        name: { type: 'string' },
        'max-mb': { type: 'string' },
        'no-check': { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
    }));
    if (values.help) {
      io.stdout.write(`${MODELS_USAGE}\n`);
      return EXIT_CODES.OK;
    }
    const [sub, ...rest] = positionals;
    if (sub === 'list') {
      if (rest.length > 0) throw new UsageError('models list takes no arguments');
      for (const flag of ['sha256', 'name', 'max-mb', 'no-check'] as const)
        if (values[flag] !== undefined) throw new UsageError(`--${flag} belongs to models install`);
    } else if (sub === 'install') {
      if (rest.length !== 1) throw new UsageError('models install needs exactly one DIR, FILE or URL');
    } else
      throw new UsageError(
        sub === undefined ? 'models needs a command: list or install' : `unknown models command ${sub}; use list or install`,
      );
  } catch (error) {
    io.stderr.write(`homeagentctl: ${describeError(error)}\n\n${MODELS_USAGE}\n`);
    return EXIT_CODES.USAGE;
  }

  const dataDir = resolve(io.cwd, values['data-dir'] ?? io.env.HOMEAGENT_DATA_DIR ?? './data');
  const modelsDir = join(dataDir, 'models');
  const json = values.json === true;
  try {
    if (positionals[0] === 'list') {
      const models = listModels(modelsDir);
      io.stdout.write(`${json ? JSON.stringify(models, null, 2) : formatModelList(models, modelsDir)}\n`);
      return EXIT_CODES.OK;
    }
    let maxBytes = DEFAULT_MODEL_MAX_BYTES;
    if (values['max-mb'] !== undefined) {
      const mb = Number(values['max-mb']);
      if (!Number.isFinite(mb) || mb <= 0) {
        io.stderr.write('homeagentctl: --max-mb must be a positive number of megabytes\n');
        return EXIT_CODES.USAGE;
      }
      maxBytes = Math.floor(mb * 1024 * 1024);
    }
    const raw = positionals[1] as string;
    const source = /^https?:\/\//i.test(raw) || isAbsolute(raw) ? raw : resolve(io.cwd, raw);
    const progress = new ProgressBar(io.stderr);
    const installed = await installModel({
      source,
      modelsDir,
      maxBytes,
      onProgress: (p) => progress.update(p),
      ...(values.sha256 === undefined ? {} : { sha256: values.sha256 }),
      ...(values.name === undefined ? {} : { name: values.name }),
      ...(values['no-check'] ? { check: false } : {}),
      ...(signal ? { signal } : {}),
    }).finally(() => progress.done());
    if (json) io.stdout.write(`${JSON.stringify({ ok: true, ...installed, use: useCommand(installed.kind, installed.name) }, null, 2)}\n`);
    else io.stdout.write(formatInstalled(installed));
    return EXIT_CODES.OK;
  } catch (error) {
    const envelope =
      error instanceof HomeAgentError
        ? { code: error.code, message: error.message }
        : { code: 'HA_ERR_INTERNAL', message: describeError(error) };
    if (json) io.stdout.write(`${JSON.stringify({ ok: false, error: envelope })}\n`);
    io.stderr.write(`homeagentctl: ${envelope.message} (${envelope.code})\n`);
    return EXIT_CODES.FAILURE;
  }
}

/**
 * The setting that makes the daemon use a model. A relative core.agent.onnx_model_path is
 * resolved against <data>/models, so the bare name works for a parser as for an embedder.
 */
export function useCommand(kind: ModelKind, name: string): string {
  const key = kind === 'embedder' ? 'core.memory.embedder' : 'core.agent.onnx_model_path';
  return `homeagentctl config set ${key} ${name}`;
}

export function formatInstalled(installed: InstalledModel): string {
  const what = installed.kind === 'embedder' ? 'sentence-embedding model' : 'dependency-parser model';
  const purpose = installed.kind === 'embedder' ? 'for memory vectors' : 'to read facts from what people say';
  return (
    `${installed.replaced ? 'replaced' : 'installed'} ${what} ${installed.name} in ${installed.dir}\n` +
    `  ${details(installed, true)}, ${megabytes(installed.record.bytes)}\n` +
    `  model.onnx sha256 ${installed.record.model_sha256}\n` +
    (installed.record.fingerprint ? `  vectors ${installed.record.fingerprint}\n` : '') +
    `to use it ${purpose}:\n` +
    `  ${useCommand(installed.kind, installed.name)}\n` +
    '  then restart HomeAgent (sudo systemctl restart homeagent)\n'
  );
}

/** One line about the manifest; `full` adds the limits and table sizes (install output). */
function details(model: ModelDescription, full = false): string {
  if (model.kind === 'embedder') {
    const m = model.manifest;
    return `dim ${m.dim}, ${m.pooling} pooling${full ? `, max ${m.max_tokens} tokens` : ''}`;
  }
  const m = model.manifest;
  return `${m.labels.length} labels, max ${m.max_words} words${full ? `, ${m.words} known words, ${m.tags} tags` : ''}`;
}

export function formatModelList(models: ModelListing[], modelsDir: string): string {
  if (models.length === 0) return `no models installed in ${modelsDir}`;
  const rows = models.map((m) =>
    m.manifest
      ? [m.name, m.kind, details(m), megabytes(m.bytes), m.record?.source ?? '(copied by hand)']
      : [m.name, m.kind ?? '-', '-', megabytes(m.bytes), `unusable: ${m.problem}`],
  );
  const header = ['NAME', 'KIND', 'DETAILS', 'SIZE', 'SOURCE'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  return [header, ...rows]
    .map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] as number))).join('  '))
    .join('\n');
}

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * A download progress bar on a terminal (redrawn in place, at most 10 times a second); on a pipe
 * or file just one summary line at the end, so logs stay readable.
 */
export class ProgressBar {
  readonly #out: ModelsIo['stderr'];
  #last: DownloadProgress | undefined;
  #drawnAt = 0;
  #started = Date.now();
  #drawn = false;

  constructor(out: ModelsIo['stderr']) {
    this.#out = out;
  }

  update(progress: DownloadProgress): void {
    if (!this.#last) this.#started = Date.now();
    this.#last = progress;
    if (!this.#out.isTTY) return;
    const now = Date.now();
    if (now - this.#drawnAt < 100 && progress.received !== progress.total) return;
    this.#drawnAt = now;
    this.#out.write(`\r${this.#line(progress)}`);
    this.#drawn = true;
  }

  done(): void {
    const last = this.#last;
    if (!last) return;
    if (this.#drawn) this.#out.write(`\r${this.#line(last)}\n`);
    else this.#out.write(`downloaded ${megabytes(last.received)}\n`);
    this.#last = undefined;
  }

  #line(p: DownloadProgress): string {
    const seconds = Math.max(0.001, (Date.now() - this.#started) / 1000);
    const rate = `${megabytes(p.received / seconds)}/s`;
    if (p.total === undefined) return `downloading ${megabytes(p.received)} ${rate}`;
    const fraction = Math.min(1, p.received / p.total);
    const width = 30;
    const filled = Math.round(fraction * width);
    return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}% ${megabytes(p.received)} of ${megabytes(p.total)} ${rate}`;
  }
}
