/**
 * The MQTT connection's reconnect waits: the shared helper (src/shared/backoff.ts, through the SDK),
 * kept under this name for the connection and its tests.
 */
export { type BackoffBounds, backoffDelay, backoffRange, ReconnectBackoff } from '../../src/sdk/index.js';
