/**
 * `homeagentctl models`: installs and lists local models in `<data>/models`: sentence-embedding
 * models (memory vectors), dependency-parser models (reading facts) and pocketsphinx speech models
 * (offline voice commands). Works on the files
 * directly, without the daemon (a download can take minutes and the daemon may not run); the
 * daemon uses a model once its configuration names it and it has been restarted.
 */
import { isAbsolute, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { DownloadProgress } from '../embed/model-download.js';
import { describeError, HomeAgentError } from '../shared/errors.js';
import { EXIT_CODES } from '../shared/exit-codes.js';
import type { Language } from '../shared/language.js';
import { cliLanguage } from './cli-language.js';
import { table } from './format.js';
import {
  DEFAULT_MODEL_MAX_BYTES,
  type InstalledModel,
  installModel,
  listModels,
  type ModelDescription,
  type ModelKind,
  type ModelListing,
} from './model-installer.js';

/** The synopsis lines after `usage:` / `用法：` (what one types: the same in both languages). */
const MODELS_SYNOPSIS = `homeagentctl models list [--data-dir DIR] [--json]
       homeagentctl models install <DIR|FILE|URL> [--sha256 HEX] [--name NAME] [--max-mb N]
                                   [--no-check] [--data-dir DIR] [--json]`;

/** `homeagentctl models --help` in each language. */
const MODELS_USAGE: Readonly<Record<Language, string>> = {
  en: `usage: ${MODELS_SYNOPSIS}

  list      installed models with their kind (embedder, parser or speech), details, size and source
  install   copy a model directory, or unpack a .tar.gz/.zip file or http(s) URL, into
            <data>/models/<name>. The directory (or archive root) holds a sentence-embedding
            model (model.onnx, tokenizer.json, embedder.json), a dependency-parser model
            (model.onnx, parser.json) or a pocketsphinx speech model (an acoustic model folder
            with mdef and feat.params, and a *.dict). --sha256 checks the archive, or model.onnx
            (speech: mdef) of a directory. The model is test-loaded before it is moved into
            place (--no-check skips). The output says which setting to change to use it.

The data directory is --data-dir, $HOMEAGENT_DATA_DIR or ./data.`,
  zh: `用法：${MODELS_SYNOPSIS}

  list      已安装的模型，附类型（嵌入模型、句法分析模型或语音模型）、详情、大小和来源
  install   复制一个模型目录，或解压 .tar.gz/.zip 文件或 http(s) 地址，到
            <data>/models/<name>。目录（或压缩包根目录）中是句向量嵌入模型
            （model.onnx、tokenizer.json、embedder.json）、依存句法分析模型
            （model.onnx、parser.json）或 pocketsphinx 语音模型（含 mdef 和 feat.params
            的声学模型目录，以及一个 *.dict）。--sha256 校验压缩包，或目录中的
            model.onnx（语音模型：mdef）。
            模型先试加载再移入（--no-check 跳过）。输出会说明改哪项设置来启用它。

数据目录由 --data-dir 或 $HOMEAGENT_DATA_DIR 指定，默认 ./data。`,
};

/** `homeagentctl models --help` in `language`. */
export function modelsUsage(language: Language): string {
  return MODELS_USAGE[language];
}

export interface ModelsIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown; isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
}

const defaultIo = (): ModelsIo => ({ stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() });

/** A models command line that does not fit, in both languages (the terminal's one is printed). */
class UsageError extends Error {
  constructor(
    message: string,
    readonly zh: string,
  ) {
    super(message);
  }
}

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
  // The terminal's language, read from the run's environment: the help, the usage errors and the
  // readable answers follow it; --json is the same in both.
  const language = cliLanguage(io.env);
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
      io.stdout.write(`${modelsUsage(language)}\n`);
      return EXIT_CODES.OK;
    }
    const [sub, ...rest] = positionals;
    if (sub === 'list') {
      if (rest.length > 0) throw new UsageError('models list takes no arguments', 'models list 不接受参数');
      for (const flag of ['sha256', 'name', 'max-mb', 'no-check'] as const)
        if (values[flag] !== undefined) throw new UsageError(`--${flag} belongs to models install`, `--${flag} 是 models install 的选项`);
    } else if (sub === 'install') {
      if (rest.length !== 1)
        throw new UsageError('models install needs exactly one DIR, FILE or URL', 'models install 需要恰好一个 DIR、FILE 或 URL');
    } else if (sub === undefined) throw new UsageError('models needs a command: list or install', 'models 需要一个子命令：list 或 install');
    else throw new UsageError(`unknown models command ${sub}; use list or install`, `未知的 models 子命令 ${sub}；可用 list 或 install`);
  } catch (error) {
    // parseArgs' own refusals (an unknown option) have no Chinese text and are printed as they are.
    const message = language === 'zh' && error instanceof UsageError ? error.zh : describeError(error);
    io.stderr.write(`homeagentctl: ${message}\n\n${modelsUsage(language)}\n`);
    return EXIT_CODES.USAGE;
  }

  const dataDir = resolve(io.cwd, values['data-dir'] ?? io.env.HOMEAGENT_DATA_DIR ?? './data');
  const modelsDir = join(dataDir, 'models');
  const json = values.json === true;
  try {
    if (positionals[0] === 'list') {
      const models = listModels(modelsDir);
      io.stdout.write(`${json ? JSON.stringify(models, null, 2) : formatModelList(models, modelsDir, language)}\n`);
      return EXIT_CODES.OK;
    }
    let maxBytes = DEFAULT_MODEL_MAX_BYTES;
    if (values['max-mb'] !== undefined) {
      const mb = Number(values['max-mb']);
      if (!Number.isFinite(mb) || mb <= 0) {
        io.stderr.write(
          `homeagentctl: ${language === 'zh' ? '--max-mb 须为正数（MB）' : '--max-mb must be a positive number of megabytes'}\n`,
        );
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
    if (json) io.stdout.write(`${JSON.stringify({ ok: true, ...installed, use: useCommand(installed) }, null, 2)}\n`);
    else io.stdout.write(formatInstalled(installed, language));
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
 * resolved against <data>/models, so the bare name works for a parser as for an embedder; the
 * voice plugin's model directory is a path of its own, so it gets the whole one.
 */
export function useCommand(model: { kind: ModelKind; name: string; dir: string }): string {
  if (model.kind === 'speech') return `homeagentctl config set plugin.voice.stt.local_model_dir ${model.dir}`;
  const key = model.kind === 'embedder' ? 'core.memory.embedder' : 'core.agent.onnx_model_path';
  return `homeagentctl config set ${key} ${model.name}`;
}

/** Every sentence `models` prints around the models' facts, in both languages. */
const WORDS = {
  en: {
    embedder: 'sentence-embedding model',
    parser: 'dependency-parser model',
    speech: 'speech model (pocketsphinx)',
    embedderPurpose: 'for memory vectors',
    parserPurpose: 'to read facts from what people say',
    speechPurpose: 'for voice commands offline',
    speechDetails: (words: number, acoustic: string, dictionary: string) => `${words} words in ${dictionary}, acoustic model ${acoustic}`,
    installed: (replaced: boolean, what: string, name: string, dir: string) =>
      `${replaced ? 'replaced' : 'installed'} ${what} ${name} in ${dir}`,
    vectors: (fingerprint: string) => `vectors ${fingerprint}`,
    toUse: (purpose: string) => `to use it ${purpose}:`,
    restart: '  then restart HomeAgent (sudo systemctl restart homeagent)',
    embedderDetails: (dim: number, pooling: string, maxTokens: number | null) =>
      `dim ${dim}, ${pooling} pooling${maxTokens === null ? '' : `, max ${maxTokens} tokens`}`,
    parserDetails: (labels: number, maxWords: number, full: { words: number; tags: number } | null) =>
      `${labels} labels, max ${maxWords} words${full === null ? '' : `, ${full.words} known words, ${full.tags} tags`}`,
    none: (dir: string) => `no models installed in ${dir}`,
    byHand: '(copied by hand)',
    unusable: (problem: string) => `unusable: ${problem}`,
    header: ['NAME', 'KIND', 'DETAILS', 'SIZE', 'SOURCE'],
    separator: ', ',
  },
  zh: {
    embedder: '句向量模型',
    parser: '依存句法模型',
    speech: '语音模型（pocketsphinx）',
    embedderPurpose: '用于记忆向量',
    parserPurpose: '用于从人们说的话里读出事实',
    speechPurpose: '用于离线语音指令',
    speechDetails: (words: number, acoustic: string, dictionary: string) => `${dictionary} 中 ${words} 个词，声学模型 ${acoustic}`,
    installed: (replaced: boolean, what: string, name: string, dir: string) =>
      `已${replaced ? '替换' : '安装'}${what} ${name}，位于 ${dir}`,
    vectors: (fingerprint: string) => `向量 ${fingerprint}`,
    toUse: (purpose: string) => `要使用它${purpose}：`,
    restart: '  然后重启 HomeAgent（sudo systemctl restart homeagent）',
    embedderDetails: (dim: number, pooling: string, maxTokens: number | null) =>
      `${dim} 维，${pooling} 池化${maxTokens === null ? '' : `，最多 ${maxTokens} 个词元`}`,
    parserDetails: (labels: number, maxWords: number, full: { words: number; tags: number } | null) =>
      `${labels} 个标签，最多 ${maxWords} 个词${full === null ? '' : `，已知 ${full.words} 个词、${full.tags} 个词性`}`,
    none: (dir: string) => `${dir} 里没有安装模型`,
    byHand: '（手动复制）',
    unusable: (problem: string) => `不可用：${problem}`,
    header: ['名称', '类型', '详情', '大小', '来源'],
    separator: '，',
  },
} as const;

export function formatInstalled(installed: InstalledModel, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  const purpose = { embedder: w.embedderPurpose, parser: w.parserPurpose, speech: w.speechPurpose }[installed.kind];
  const checksummed = installed.kind === 'speech' ? 'mdef' : 'model.onnx';
  return (
    `${w.installed(installed.replaced, w[installed.kind], installed.name, installed.dir)}\n` +
    `  ${details(installed, language, true)}${w.separator}${megabytes(installed.record.bytes)}\n` +
    `  ${checksummed} sha256 ${installed.record.model_sha256}\n` +
    (installed.record.fingerprint ? `  ${w.vectors(installed.record.fingerprint)}\n` : '') +
    `${w.toUse(purpose)}\n` +
    `  ${useCommand(installed)}\n` +
    `${w.restart}\n`
  );
}

/** One line about the manifest; `full` adds the limits and table sizes (install output). */
function details(model: ModelDescription, language: Language, full = false): string {
  const w = WORDS[language];
  if (model.kind === 'embedder') {
    const m = model.manifest;
    return w.embedderDetails(m.dim, m.pooling, full ? m.max_tokens : null);
  }
  if (model.kind === 'speech') return w.speechDetails(model.manifest.words, model.manifest.acoustic, model.manifest.dictionary);
  const m = model.manifest;
  return w.parserDetails(m.labels.length, m.max_words, full ? { words: m.words, tags: m.tags } : null);
}

export function formatModelList(models: ModelListing[], modelsDir: string, language: Language = cliLanguage()): string {
  const w = WORDS[language];
  if (models.length === 0) return w.none(modelsDir);
  const rows = models.map((m) =>
    m.manifest
      ? [m.name, m.kind, details(m, language), megabytes(m.bytes), m.record?.source ?? w.byHand]
      : [m.name, m.kind ?? '-', '-', megabytes(m.bytes), w.unusable(m.problem)],
  );
  return table([[...w.header], ...rows], '');
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
