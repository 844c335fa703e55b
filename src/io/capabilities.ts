/** Capability bits ⇄ output type names, for tool schemas, help texts and error hints. */
import { CAPABILITY_FOR, type OutputType } from './types.js';

/** Every output type, in bit order (text 1, file 2, image 4, audio 8, structured 16). */
export const OUTPUT_TYPES: readonly OutputType[] = ['text', 'file', 'image', 'audio', 'structured'];

/** All bits together: anything outside this mask is not a capability. */
export const ALL_CAPABILITIES = OUTPUT_TYPES.reduce((mask, type) => mask | CAPABILITY_FOR[type], 0);

/** The output types a capability mask allows, in bit order. */
export function typesOf(capabilities: number): OutputType[] {
  return OUTPUT_TYPES.filter((type) => (capabilities & CAPABILITY_FOR[type]) !== 0);
}

export function isOutputType(value: unknown): value is OutputType {
  return typeof value === 'string' && (OUTPUT_TYPES as readonly string[]).includes(value);
}

export function canCarry(capabilities: number, type: OutputType): boolean {
  return (capabilities & CAPABILITY_FOR[type]) !== 0;
}
