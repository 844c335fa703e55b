/**
 * Who may do what on the embedded broker: the logins it knows, which of them a CONNECT proves, and
 * which topics each may publish on. Kept apart from the aedes wiring (embedded-broker.ts) so the
 * rules read in one place and can be tested without sockets.
 *
 * Identities:
 * - `homeagent`: HomeAgent's own client. Only it may publish on HomeAgent's own topics (the
 *   namespace under the base topic: status, states, attributes, availability, the agent's
 *   last_reply, and whatever HomeAgent publishes there later; and this node's Home Assistant
 *   discovery configs). Its login and its client id go together both ways: the login connects
 *   only with that client id, and that client id only with that login. Otherwise another client
 *   could take over HomeAgent's persistent session (aedes hands a client id's session and queued
 *   messages to whoever connects with it last), and a will stored under that id would be
 *   published with HomeAgent's rights after a crash.
 * - `device`: everyone else who logs in (Home Assistant, Zigbee2MQTT, Tasmota, other HomeAgent
 *   nodes), and anonymous clients when plugin.mqtt.broker_allow_anonymous lets them in. They may
 *   publish on the topics HomeAgent listens to (`<base>/<entity_id>/set`, `<base>/agent/notify`)
 *   and on everything that is not HomeAgent's, so hubs keep their own topics.
 *
 * Passwords are compared as SHA-256 digests with timingSafeEqual, every login every time, so the
 * answer time tells neither which login was tried nor how much of a guess was right. The generated
 * passwords are random (192 bits), which a slow hash would not make any safer, while it would
 * make a storm of wrong logins cost a Pi seconds of CPU each.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { topicMatches } from './topics.js';

export type BrokerRole = 'homeagent' | 'device';

/** A user name and password the broker accepts. */
export interface BrokerLogin {
  username: string;
  password: string;
  role: BrokerRole;
}

/** Who a connected client proved to be. */
export interface BrokerIdentity {
  role: BrokerRole;
  /** The login's user name; '' for an anonymous client. */
  username: string;
  anonymous: boolean;
}

export interface BrokerAccessOptions {
  logins: readonly BrokerLogin[];
  /** plugin.mqtt.broker_allow_anonymous: a CONNECT without a user name gets device rights. */
  allowAnonymous: boolean;
  /** The client id HomeAgent's own client connects with (plugin.mqtt.client_id, resolved). */
  ownClientId: string;
  /** HomeAgent's topics: filters only the homeagent login may publish on. */
  reserved: readonly string[];
  /** Topics inside `reserved` that HomeAgent listens to, open to every client. */
  open: readonly string[];
}

/** CONNACK return codes (MQTT 3.1.1 §3.2.2.3). */
export const CONNACK = { SERVER_UNAVAILABLE: 3, BAD_USERNAME_OR_PASSWORD: 4, NOT_AUTHORIZED: 5 } as const;

/** Why a CONNECT was refused, as a word (the refusal warnings are throttled per kind). */
export type RefusalKind = 'no_login' | 'bad_login' | 'client_id' | 'will';

export type LoginResult = { ok: true; identity: BrokerIdentity } | { ok: false; returnCode: number; kind: RefusalKind; reason: string };

/** What a CONNECT offers. */
export interface ConnectOffer {
  clientId: string;
  username: string | undefined;
  password: Buffer | undefined;
  /** The topic of the client's last will, if it has one. */
  willTopic: string | undefined;
}

/** HomeAgent's own topics on a broker, from the resolved base topic, discovery prefix and node id. */
export function ownTopics(baseTopic: string, discoveryPrefix: string, nodeId: string): { reserved: string[]; open: string[] } {
  const root = baseTopic.replace(/\/+$/, '');
  const prefix = discoveryPrefix.replace(/\/+$/, '');
  return {
    // `<root>/#` covers `<root>` itself too (MQTT 3.1.1 §4.7.1.2).
    reserved: [`${root}/#`, `${prefix}/+/${nodeId}/#`],
    open: [`${root}/+/set`, `${root}/agent/notify`],
  };
}

export class BrokerAccess {
  readonly #options: BrokerAccessOptions;
  #logins: DigestedLogin[];

  constructor(options: BrokerAccessOptions) {
    this.#options = options;
    this.#logins = options.logins.map(digestLogin);
  }

  get allowAnonymous(): boolean {
    return this.#options.allowAnonymous;
  }

  get ownClientId(): string {
    return this.#options.ownClientId;
  }

  /** Replaces one login's password (the old one stops working at once); false when no login has that user name. */
  setPassword(username: string, password: string): boolean {
    const index = this.#logins.findIndex((login) => login.username === username);
    const current = this.#logins[index];
    if (current === undefined) return false;
    this.#logins = this.#logins.map((login, i) => (i === index ? digestLogin({ username, password, role: current.role }) : login));
    return true;
  }

  /** Decides a CONNECT: who the client is, or the CONNACK code and why it is refused. */
  login(offer: ConnectOffer): LoginResult {
    const identity = this.#identify(offer);
    if (!identity.ok) return identity;
    const { role } = identity.identity;
    const own = this.#options.ownClientId;
    if (role === 'homeagent' && offer.clientId !== own) {
      return {
        ok: false,
        returnCode: CONNACK.NOT_AUTHORIZED,
        kind: 'client_id',
        reason: `HomeAgent's login is only for its own client id ${own}`,
      };
    }
    if (role !== 'homeagent' && offer.clientId === own) {
      return { ok: false, returnCode: CONNACK.NOT_AUTHORIZED, kind: 'client_id', reason: `the client id ${own} is HomeAgent's own` };
    }
    if (offer.willTopic !== undefined && !this.mayPublish(identity.identity, offer.clientId, offer.willTopic)) {
      return {
        ok: false,
        returnCode: CONNACK.NOT_AUTHORIZED,
        kind: 'will',
        reason: `its last will is on ${offer.willTopic}, one of HomeAgent's own topics`,
      };
    }
    return identity;
  }

  /**
   * May this client publish on `topic`? `identity` is undefined for a will aedes publishes after a
   * restart without its client: then the client id decides, which {@link login} bound to the login.
   */
  mayPublish(identity: BrokerIdentity | undefined, clientId: string, topic: string): boolean {
    const homeagent = identity === undefined ? clientId === this.#options.ownClientId : identity.role === 'homeagent';
    if (homeagent) return true;
    return !this.isReserved(topic);
  }

  /** Is `topic` one of HomeAgent's own (and not one it listens to)? */
  isReserved(topic: string): boolean {
    const { reserved, open } = this.#options;
    return reserved.some((filter) => topicMatches(filter, topic)) && !open.some((filter) => topicMatches(filter, topic));
  }

  /** May this client subscribe to `filter`? Only HomeAgent reads the broker's own `$SYS/` topics (who is connected, and when). */
  maySubscribe(identity: BrokerIdentity, filter: string): boolean {
    return identity.role === 'homeagent' || !filter.startsWith('$SYS');
  }

  #identify(offer: ConnectOffer): LoginResult {
    if (offer.username === undefined || offer.username === '') {
      if (offer.password !== undefined && offer.password.length > 0) {
        return { ok: false, returnCode: CONNACK.BAD_USERNAME_OR_PASSWORD, kind: 'bad_login', reason: 'a password without a user name' };
      }
      if (this.#options.allowAnonymous) return { ok: true, identity: { role: 'device', username: '', anonymous: true } };
      return {
        ok: false,
        returnCode: CONNACK.NOT_AUTHORIZED,
        kind: 'no_login',
        reason: 'no login (this broker needs a user name and password)',
      };
    }
    const user = digest(offer.username);
    const password = digest(offer.password ?? Buffer.alloc(0));
    let found: DigestedLogin | undefined;
    // Every login compared in full, user name and password both: no early exit to time.
    for (const login of this.#logins) {
      const userOk = timingSafeEqual(user, login.user);
      const passwordOk = timingSafeEqual(password, login.password);
      if (userOk && passwordOk) found = login;
    }
    if (found === undefined) {
      return { ok: false, returnCode: CONNACK.BAD_USERNAME_OR_PASSWORD, kind: 'bad_login', reason: 'bad user name or password' };
    }
    return { ok: true, identity: { role: found.role, username: found.username, anonymous: false } };
  }
}

interface DigestedLogin {
  username: string;
  user: Buffer;
  password: Buffer;
  role: BrokerRole;
}

function digestLogin(login: BrokerLogin): DigestedLogin {
  return { username: login.username, user: digest(login.username), password: digest(login.password), role: login.role };
}

function digest(value: string | Buffer): Buffer {
  return createHash('sha256').update(value).digest();
}
