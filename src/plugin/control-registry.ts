/** The kernel's implementation of the control API: a method table with parameter validation. */
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Caller, ControlApi, ControlMethod, MethodInfo } from '../sdk/control.js';
import { HomeAgentError } from '../shared/errors.js';

const METHOD_NAME = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;

export class ControlRegistry implements ControlApi {
  readonly #methods = new Map<string, ControlMethod>();

  register<P extends TSchema, R>(method: ControlMethod<P, R>): () => void {
    if (!METHOD_NAME.test(method.name)) {
      throw new HomeAgentError('HA_ERR_INTERNAL', `invalid control method name ${JSON.stringify(method.name)}`);
    }
    if (this.#methods.has(method.name)) throw new HomeAgentError('HA_ERR_INTERNAL', `control method ${method.name} is already registered`);
    this.#methods.set(method.name, method as unknown as ControlMethod);
    return () => {
      if (this.#methods.get(method.name) === (method as unknown as ControlMethod)) this.#methods.delete(method.name);
    };
  }

  methods(): MethodInfo[] {
    return [...this.#methods.values()]
      .map((m) => ({ name: m.name, description: m.description }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  async call(name: string, params: unknown, caller: Caller): Promise<unknown> {
    const method = this.#methods.get(name);
    if (!method) {
      throw new HomeAgentError(
        'HA_ERR_RPC_UNKNOWN_METHOD',
        `no method named ${JSON.stringify(name)}; known: ${[...this.#methods.keys()].sort().join(', ')}`,
      );
    }
    if (method.owner_only && caller.owner !== true) {
      throw new HomeAgentError(
        'HA_ERR_RPC_FORBIDDEN',
        `${name} is for the owner only (homeagentctl on this machine, or the web page logged in); ${caller.actor} may not call it`,
      );
    }
    const given = params ?? {};
    if (!Value.Check(method.params, given)) {
      const first = Value.Errors(method.params, given).First();
      const where = first?.path ? `params${first.path.replace(/\//g, '.')}` : 'params';
      throw new HomeAgentError('HA_ERR_RPC_INVALID_PARAMS', `${name}: ${where}: ${first?.message ?? 'invalid'}`);
    }
    return method.handler(given, caller);
  }
}
