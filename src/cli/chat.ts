/**
 * `homeagentctl chat`: talk to the agent. `-m TEXT` (or text piped on stdin) sends one message
 * and prints the answer; on a terminal it is a line-by-line conversation until /exit or Ctrl-D.
 */
import { createInterface } from 'node:readline';
import type { Receipt } from '../api/inputs.js';
import type { RpcClient } from './rpc-client.js';

export interface ChatOptions {
  message: string | undefined;
  json: boolean;
  timeoutMs: number;
}

/** Sends one message; returns the exit code (0 answered, 1 failed). */
async function say(client: RpcClient, text: string, options: ChatOptions): Promise<number> {
  const receipt = (await client.call('agent.chat', { text }, options.timeoutMs)) as Receipt;
  if (options.json) {
    process.stdout.write(`${JSON.stringify(receipt)}\n`);
  } else if (receipt.status === 'done') {
    process.stdout.write(`${receipt.text ?? ''}\n`);
  } else {
    const why = receipt.error?.message ?? receipt.reason ?? receipt.status;
    process.stderr.write(`homeagentctl: ${receipt.status}: ${why}\n`);
  }
  return receipt.status === 'done' ? 0 : 1;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

export async function runChat(client: RpcClient, options: ChatOptions): Promise<number> {
  if (options.message !== undefined) return say(client, options.message, options);
  if (!process.stdin.isTTY) {
    const text = (await readAll(process.stdin)).trim();
    return text ? say(client, text, options) : 0;
  }
  process.stdout.write('Talking to HomeAgent. /exit or Ctrl-D ends the conversation.\n');
  const lines = createInterface({ input: process.stdin, output: process.stdout, prompt: 'you> ', historySize: 1000 });
  let code = 0;
  lines.prompt();
  for await (const line of lines) {
    const text = line.trim();
    if (text === '/exit' || text === '/quit') break;
    if (text) code = await say(client, text, options);
    lines.prompt();
  }
  lines.close();
  return code;
}
