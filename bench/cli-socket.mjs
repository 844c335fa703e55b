/** One newline-delimited JSON call on the daemon's CLI socket, a new connection per call as homeagentctl makes. */
import { createConnection } from 'node:net';

export function rpc(socketPath, method, params) {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${JSON.stringify({ id: 1, method, params })}\n`));
    socket.on('data', (text) => {
      buffer += text;
      const newline = buffer.indexOf('\n');
      if (newline < 0) return;
      socket.end();
      const answer = JSON.parse(buffer.slice(0, newline));
      if (answer.ok) resolve(answer.result);
      else reject(new Error(`${method}: ${answer.error.code} ${answer.error.message}`));
    });
    socket.on('error', reject);
  });
}
