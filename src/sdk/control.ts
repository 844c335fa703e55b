/**
 * The control API: named methods (status, health, config.*, backup, ...) that administrative
 * transports expose. The CLI socket is one transport; the web API will be another. Methods are
 * registered by the kernel and by plugins; every call names its actor for the audit log.
 */
import type { Static, TSchema } from '@sinclair/typebox';

/** Who is calling, for audit records: `cli`, `webui:admin`, `plugin:mqtt`, ... */
export interface Caller {
  actor: string;
  /**
   * The transport proved the caller is the owner: the CLI socket (only the owner's accounts can
   * open it) or a web session or API key. Methods marked `owner_only` refuse everyone else.
   */
  owner?: boolean;
  /** How the transport authenticated the caller (`the CLI socket`, `a web session`), shown with what it asks for. */
  proof?: string;
}

export interface ControlMethod<P extends TSchema = TSchema, R = unknown> {
  /** Dotted lower-case name, e.g. `config.get`. */
  name: string;
  description: string;
  /** Schema of the params object; calls that do not match are refused before the handler runs. */
  params: P;
  /** Only owner callers ({@link Caller.owner}) may call it: it approves dangerous actions or shows secrets. */
  owner_only?: boolean;
  handler(params: Static<P>, caller: Caller): R | Promise<R>;
}

export interface MethodInfo {
  name: string;
  description: string;
}

export interface ControlApi {
  /** Calls a method. Errors are HomeAgentErrors with stable codes (HA_ERR_RPC_* for call problems). */
  call(method: string, params: unknown, caller: Caller): Promise<unknown>;
  methods(): MethodInfo[];
}
