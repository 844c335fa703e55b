/**
 * The seq plugin's control methods, behind `homeagentctl sequences` and the web API: `seq.list`
 * (anyone who may call control methods), `seq.run` and `seq.delete` (owner callers only: the CLI
 * socket, a web session or key). An owner-proven caller asking for a run by name is the owner's own
 * decision, so `seq.run` runs a sequence of any tier; it is audited with the caller as actor.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import type { ControlMethod } from '../../src/sdk/index.js';

export interface SeqMethodHandlers {
  list(): unknown;
  run(name: string, args: Record<string, unknown>, actor: string): Promise<unknown>;
  delete(name: string, actor: string): unknown;
}

const NAME = Type.String({ minLength: 1, maxLength: 64, description: 'The sequence name.' });

/** Keeps each method's params type for its handler, then widens it for the list. */
const method = <P extends TSchema>(m: ControlMethod<P>): ControlMethod => m as unknown as ControlMethod;

export function seqMethods(handlers: SeqMethodHandlers): ControlMethod[] {
  return [
    method({
      name: 'seq.list',
      description: 'The stored tool sequences with their arguments, groups and tier.',
      params: Type.Object({}),
      handler: () => handlers.list(),
    }),
    method({
      name: 'seq.run',
      description: 'Runs a stored sequence with its arguments (owner only; dangerous steps included).',
      params: Type.Object({ name: NAME, args: Type.Optional(Type.Record(Type.String(), Type.Unknown())) }),
      owner_only: true,
      handler: (params, caller) => handlers.run(params.name, params.args ?? {}, caller.actor),
    }),
    method({
      name: 'seq.delete',
      description: 'Deletes a stored sequence (owner only).',
      params: Type.Object({ name: NAME }),
      owner_only: true,
      handler: (params, caller) => handlers.delete(params.name, caller.actor),
    }),
  ];
}
