/**
 * `homeagentctl chat`: talk to the agent. `-m TEXT` (or text piped on stdin) sends one message
 * and prints the answer; on a terminal it is a line-by-line conversation until /exit or Ctrl-D.
 */
import { createInterface } from 'node:readline';
import type { Receipt } from '../api/inputs.js';
import type { Language } from '../shared/language.js';
import { runLanguage, stateWord } from './cli-words.js';
import type { RpcClient } from './rpc-client.js';

/** Where a chat reads and writes: the terminal, or a test's streams. */
export interface ChatIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Piped text (one message), or a terminal (a conversation). */
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

export interface ChatOptions {
  message: string | undefined;
  json: boolean;
  timeoutMs: number;
  /** The language of homeagentctl's own words (the greeting, a failure); the agent answers in its own. The terminal's by default. */
  language?: Language;
}

/** homeagentctl's own words around the conversation, in both languages. */
const WORDS = {
  en: { greeting: 'Talking to HomeAgent. /exit or Ctrl-D ends the conversation.', prompt: 'you> ', colon: ': ' },
  zh: { greeting: '正在与 HomeAgent 对话。输入 /exit 或按 Ctrl-D 结束。', prompt: '你> ', colon: '：' },
} as const;

/** Sends one message; returns the exit code (0 answered, 1 failed). */
async function say(client: RpcClient, text: string, options: ChatOptions, io: ChatIo): Promise<number> {
  const receipt = (await client.call('agent.chat', { text }, options.timeoutMs)) as Receipt;
  if (options.json) {
    io.stdout.write(`${JSON.stringify(receipt)}\n`);
  } else if (receipt.status === 'done') {
    io.stdout.write(`${receipt.text ?? ''}\n`);
  } else {
    const language = runLanguage(options);
    const why = receipt.error?.message ?? receipt.reason ?? stateWord(receipt.status, language);
    io.stderr.write(`homeagentctl: ${stateWord(receipt.status, language)}${WORDS[language].colon}${why}\n`);
  }
  return receipt.status === 'done' ? 0 : 1;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

export async function runChat(client: RpcClient, options: ChatOptions, io: ChatIo): Promise<number> {
  if (options.message !== undefined) return say(client, options.message, options, io);
  if (!io.stdin.isTTY) {
    const text = (await readAll(io.stdin)).trim();
    return text ? say(client, text, options, io) : 0;
  }
  const words = WORDS[runLanguage(options)];
  io.stdout.write(`${words.greeting}\n`);
  const output = io.stdout as NodeJS.WritableStream;
  const lines = createInterface({ input: io.stdin, output, prompt: words.prompt, historySize: 1000 });
  let code = 0;
  lines.prompt();
  for await (const line of lines) {
    const text = line.trim();
    if (text === '/exit' || text === '/quit') break;
    if (text) code = await say(client, text, options, io);
    lines.prompt();
  }
  lines.close();
  return code;
}
