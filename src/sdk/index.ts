/**
 * The public SDK: the only kernel module that plugins (plugins/**) and device drivers (devices/**)
 * import. Everything here is a stable contract.
 */
export type { EventMap, EventName } from '../events/event-bus.js';
export type { Logger } from '../log/logger.js';
export { ERROR_CODES, type ErrorCode, type ErrorEnvelope, HomeAgentError, isHomeAgentError, toErrorEnvelope } from '../shared/errors.js';
export { type DecodedFrame, LineDecoder } from '../shared/line-decoder.js';
export type { Service, ServiceState } from '../shared/service.js';
export type { Caller, ControlApi, ControlMethod, MethodInfo } from './control.js';
export {
  definePlugin,
  isPluginModule,
  type PluginContext,
  type PluginEvents,
  type PluginFactory,
  type PluginInstance,
  type PluginModule,
  type PluginPaths,
  type PluginSettings,
} from './plugin.js';
