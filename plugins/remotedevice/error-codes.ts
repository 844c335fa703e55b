/**
 * The error codes of the remotedevice plugin (companion devices): part of the one catalogue
 * (src/shared/errors.ts composes every such file through the generated src/shared/plugin-error-codes.ts).
 * Frame codes go to the device in an `error` frame; the others to the model, the CLI and the log.
 * Plain data, importing nothing; codes are never reused.
 */
export const errorCodes = {
  HA_ERR_REMOTEDEVICE_FRAME:
    'a device sent a frame that is not protocol: not JSON, not an object, an unknown type, or fields of the wrong shape',
  HA_ERR_REMOTEDEVICE_TOO_LARGE:
    'a device sent more than plugin.remotedevice.max_message_bytes in one message (or more than the handshake allows before it bound)',
  HA_ERR_REMOTEDEVICE_PROTOCOL:
    'a device speaks another protocol version, or sent a frame out of order (bind before hello, a request before bind)',
  HA_ERR_REMOTEDEVICE_AUTH: 'a device bound with an unknown device id or a wrong token',
  HA_ERR_REMOTEDEVICE_HANDSHAKE_TIMEOUT: 'a connection did not finish hello and bind within plugin.remotedevice.handshake_timeout_ms',
  HA_ERR_REMOTEDEVICE_PING_TIMEOUT: 'a device did not answer a ping within plugin.remotedevice.ping_timeout_ms and was taken offline',
  HA_ERR_REMOTEDEVICE_REVOKED: 'the device was revoked (or its token replaced) by the owner',
  HA_ERR_REMOTEDEVICE_UNKNOWN: 'no device with that id is registered',
  HA_ERR_REMOTEDEVICE_EXISTS: 'a device with that id is registered already',
  HA_ERR_REMOTEDEVICE_LIMIT: 'plugin.remotedevice.max_devices devices are registered already, or max_connections are open',
  HA_ERR_REMOTEDEVICE_OFFLINE: 'the device is not connected (or its connection closed while a request was pending)',
  HA_ERR_REMOTEDEVICE_CAPABILITY: 'the device does not offer that capability, or the owner did not grant it',
  HA_ERR_REMOTEDEVICE_BUSY: 'the device has plugin.remotedevice.max_pending_requests requests pending already',
  HA_ERR_REMOTEDEVICE_TIMEOUT: 'the device did not answer a request within its time',
  HA_ERR_REMOTEDEVICE_REFUSED: 'the device refused the request (a command not on its allowlist, a capability it cannot serve now)',
  HA_ERR_REMOTEDEVICE_BAD_RESULT:
    'the device answered a request with a result of the wrong shape (a screenshot that is no picture, a missing field)',
  HA_ERR_REMOTEDEVICE_NO_JOB:
    'no command job with that id is known (never started, or dropped after plugin.remotedevice.max_jobs newer ones)',
} as const;
