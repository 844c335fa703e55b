/**
 * A real mosquitto for tests: started on a free loopback port with its own config file in a temp
 * directory (persistence on, a log file), optionally with a password file and TLS listeners whose
 * certificates are made by `openssl` at test time. `restart()` stops it with SIGTERM (mosquitto
 * saves its persistence file then) and starts it again on the same port and data; `kill()` is
 * SIGKILL (nothing saved). Tests skip with `mosquittoMissing()` / `opensslMissing()` as reason when
 * a binary is absent (.ci/run installs both).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { findOnPath } from '../../src/shared/find-on-path.js';

const START_DEADLINE_MS = 10_000;
const STOP_DEADLINE_MS = 10_000;

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function mosquittoBinary(): string | undefined {
  return executable('/usr/sbin/mosquitto') ? '/usr/sbin/mosquitto' : findOnPath('mosquitto');
}

/** Why mosquitto tests cannot run here, or undefined. */
export function mosquittoMissing(): string | undefined {
  if (mosquittoBinary() === undefined) return 'mosquitto is not installed (apt-get install mosquitto; .ci/run does)';
  return undefined;
}

/** Why TLS tests cannot run here, or undefined. */
export function opensslMissing(): string | undefined {
  return findOnPath('openssl') === undefined ? 'openssl is not installed (apt-get install openssl; .ci/run does)' : undefined;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export interface TlsFiles {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A CA that signed none of the above: trusting it must fail. */
  otherCa: string;
}

export interface MosquittoOptions {
  /** Holds the config, the persistence file, the log and the certificates. */
  dir: string;
  /** Keep messages and sessions across restarts (default true). */
  persistence?: boolean;
  /** User name → password; anonymous clients are then refused. */
  users?: Record<string, string>;
  /** Two more listeners: TLS (tlsUrl) and TLS requiring a client certificate (mtlsUrl, the certificate's CN is the user name). */
  tls?: boolean;
  /** Extra mosquitto.conf lines (global section). */
  config?: string[];
}

export class Mosquitto {
  readonly dir: string;
  readonly port: number;
  readonly url: string;
  readonly logFile: string;
  readonly tls: TlsFiles | undefined;
  readonly tlsUrl: string | undefined;
  readonly mtlsUrl: string | undefined;
  readonly #conf: string;
  readonly #ports: number[];
  #child: ChildProcess | undefined;
  #stderr = '';

  private constructor(fields: {
    dir: string;
    port: number;
    conf: string;
    tls?: TlsFiles;
    tlsPort?: number;
    mtlsPort?: number;
  }) {
    this.dir = fields.dir;
    this.port = fields.port;
    this.url = `mqtt://127.0.0.1:${fields.port}`;
    this.logFile = join(fields.dir, 'mosquitto.log');
    this.tls = fields.tls;
    this.tlsUrl = fields.tlsPort === undefined ? undefined : `mqtts://127.0.0.1:${fields.tlsPort}`;
    this.mtlsUrl = fields.mtlsPort === undefined ? undefined : `mqtts://127.0.0.1:${fields.mtlsPort}`;
    this.#conf = fields.conf;
    this.#ports = [fields.port, fields.tlsPort, fields.mtlsPort].filter((p): p is number => p !== undefined);
  }

  /** Writes the config (and password file, certificates) and starts mosquitto; resolves once every listener accepts connections. */
  static async start(options: MosquittoOptions): Promise<Mosquitto> {
    const missing = mosquittoMissing();
    if (missing !== undefined) throw new Error(missing);
    const dir = options.dir;
    const data = join(dir, 'data');
    mkdirSync(data, { recursive: true });
    const port = await freePort();
    const lines = [
      'per_listener_settings false',
      `persistence ${options.persistence === false ? 'false' : 'true'}`,
      `persistence_location ${data}/`,
      `log_dest file ${join(dir, 'mosquitto.log')}`,
      'log_type error',
      'log_type warning',
      'log_type notice',
      'log_type information',
      'connection_messages true',
      // The process runs as whoever runs the tests; as root mosquitto would switch to "mosquitto",
      // which cannot write the test's directory.
      ...(process.getuid?.() === 0 ? ['user root'] : []),
      ...(options.config ?? []),
    ];
    if (options.users === undefined) lines.push('allow_anonymous true');
    else {
      const passwd = join(dir, 'passwd');
      writeFileSync(passwd, '');
      for (const [user, password] of Object.entries(options.users)) {
        execFileSync('mosquitto_passwd', ['-b', passwd, user, password], { stdio: 'ignore' });
      }
      lines.push('allow_anonymous false', `password_file ${passwd}`);
    }
    lines.push(`listener ${port} 127.0.0.1`);
    let tls: TlsFiles | undefined;
    let tlsPort: number | undefined;
    let mtlsPort: number | undefined;
    if (options.tls === true) {
      tls = makeCertificates(join(dir, 'certs'));
      tlsPort = await freePort();
      mtlsPort = await freePort();
      const serverFiles = [`cafile ${tls.ca}`, `certfile ${tls.serverCert}`, `keyfile ${tls.serverKey}`];
      lines.push(`listener ${tlsPort} 127.0.0.1`, ...serverFiles);
      lines.push(`listener ${mtlsPort} 127.0.0.1`, ...serverFiles, 'require_certificate true', 'use_identity_as_username true');
    }
    const conf = join(dir, 'mosquitto.conf');
    writeFileSync(conf, `${lines.join('\n')}\n`);
    const broker = new Mosquitto({
      dir,
      port,
      conf,
      ...(tls ? { tls } : {}),
      ...(tlsPort ? { tlsPort } : {}),
      ...(mtlsPort ? { mtlsPort } : {}),
    });
    await broker.#launch();
    return broker;
  }

  get running(): boolean {
    return this.#child !== undefined;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** The log file so far (for assertions and failure messages). */
  log(): string {
    return existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8') : '';
  }

  /** SIGTERM (mosquitto writes its persistence file), wait for the exit, start again on the same ports and data. */
  async restart(): Promise<void> {
    await this.stop();
    await this.#launch();
  }

  /** Starts it again after stop() or kill(). */
  async start(): Promise<void> {
    if (this.#child === undefined) await this.#launch();
  }

  /** SIGKILL: the broker dies without saving anything. */
  async kill(): Promise<void> {
    await this.#signal('SIGKILL');
  }

  /** SIGTERM and wait for the exit; idempotent. */
  async stop(): Promise<void> {
    await this.#signal('SIGTERM');
  }

  async #signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    this.#child = undefined;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_DEADLINE_MS);
    await exited;
    clearTimeout(timer);
  }

  async #launch(): Promise<void> {
    const binary = mosquittoBinary();
    if (binary === undefined) throw new Error('mosquitto is not installed');
    this.#stderr = '';
    const child = spawn(binary, ['-c', this.#conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (text: string) => {
      this.#stderr += text;
    });
    this.#child = child;
    let exited = false;
    child.once('exit', () => {
      exited = true;
      if (this.#child === child) this.#child = undefined;
    });
    const deadline = Date.now() + START_DEADLINE_MS;
    for (const port of this.#ports) {
      while (!(await accepts(port))) {
        if (exited || Date.now() > deadline) {
          await this.#signal('SIGKILL');
          throw new Error(`mosquitto did not start on port ${port}: ${this.#stderr.trim()}\n${this.log().slice(-2000)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }
}

/** True when something accepts TCP connections on the loopback port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A test CA, a server certificate for 127.0.0.1/localhost, a client certificate, and an unrelated CA (EC keys: fast). */
export function makeCertificates(dir: string): TlsFiles {
  mkdirSync(dir, { recursive: true });
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const ca = (name: string, cn: string) =>
    openssl(
      'req',
      '-x509',
      ...ec,
      '-keyout',
      file(`${name}.key`),
      '-out',
      file(`${name}.crt`),
      '-days',
      '2',
      '-subj',
      `/CN=${cn}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    );
  const signed = (name: string, cn: string, extensions: string) => {
    openssl('req', ...ec, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`), '-subj', `/CN=${cn}`);
    writeFileSync(file(`${name}.ext`), `${extensions}\n`);
    openssl(
      'x509',
      '-req',
      '-in',
      file(`${name}.csr`),
      '-CA',
      file('ca.crt'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-out',
      file(`${name}.crt`),
      '-days',
      '2',
      '-extfile',
      file(`${name}.ext`),
    );
  };
  ca('ca', 'HomeAgent test CA');
  ca('other-ca', 'Some other CA');
  signed('server', 'localhost', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth');
  signed('client', 'homeagent-client', 'extendedKeyUsage=clientAuth');
  return {
    ca: file('ca.crt'),
    serverCert: file('server.crt'),
    serverKey: file('server.key'),
    clientCert: file('client.crt'),
    clientKey: file('client.key'),
    otherCa: file('other-ca.crt'),
  };
}
