/**
 * The wire shapes of the mqtt plugin's control methods (mqtt.status, mqtt.publish,
 * mqtt.credentials), as `homeagentctl mqtt` and the web page read them.
 */

export type Qos = 0 | 1 | 2;

/** Counters every feature reports into (mqtt.status and health). */
export interface MqttCounters {
  received: number;
  published: number;
  /** Inbound QoS 1 messages recognised as redeliveries of one already handled. */
  duplicates: number;
  /** Payloads that could not be read (bad JSON, bad number) — logged, never fatal. */
  malformed: number;
  oversized: number;
  /** Messages dropped by per-topic rate limits. */
  rate_limited: number;
  /** QoS 0 publishes dropped while disconnected, and outbox overflow. */
  dropped: number;
  reconnects: number;
}

export type ConnectionState = 'idle' | 'connecting' | 'connected' | 'disconnected' | 'stopped';

export interface OutboxStats {
  /** Packets kept now (PUBLISH and PUBREL). */
  messages: number;
  /** Packets found in the journal at open. */
  loaded: number;
  /** Journal lines that could not be read at open (torn writes). */
  skipped_lines: number;
  /** Publishes dropped because the outbox was full. */
  dropped: number;
  /** Why the outbox is not durable right now, or null. */
  problem: string | null;
}

export interface MqttStatus {
  state: ConnectionState | 'off';
  connected: boolean;
  /** The broker URL without its password ('' when off). */
  url: string;
  client_id: string;
  node_id: string;
  base_topic: string;
  since: string | null;
  session_present: boolean | null;
  reconnects: number;
  failed_attempts: number;
  next_attempt_in_ms: number | null;
  last_error: string | null;
  subscriptions: string[];
  outbox: (OutboxStats & { max: number }) | null;
  counters: MqttCounters;
  broker: unknown;
  features: Array<{ name: string; status: unknown }>;
}

export interface MqttPublishResult {
  topic: string;
  qos: Qos;
  retain: boolean;
  bytes: number;
  /** sent: written to the broker; queued: kept in the outbox until the broker is back; dropped: QoS 0 while disconnected. */
  delivery: 'sent' | 'queued' | 'dropped';
}

/** What `mqtt.credentials` answers: how devices log in to the embedded broker. */
export interface MqttCredentials {
  /** plugin.mqtt.broker_host (0.0.0.0 / ::: any address of this machine). */
  host: string;
  /** Plain MQTT (on 127.0.0.1 only when TLS is on). */
  port: number;
  /** MQTT over TLS on host, or null without plugin.mqtt.broker_tls_cert_file. */
  tls_port: number | null;
  username: string;
  password: string;
  /** plugin.mqtt.broker_username when set (its password is in the configuration, not shown here). */
  extra_username: string | null;
  anonymous_allowed: boolean;
  /** Where the logins are kept (mode 0600). */
  file: string;
  created_at: string;
  updated_at: string;
  /** After a reset: the clients that were logged in with the old password, now disconnected. */
  disconnected?: number;
}
