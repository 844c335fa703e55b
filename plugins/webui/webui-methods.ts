/**
 * `webui.credentials`: the web server's address, admin password and API key, shown again after
 * the first start printed them (`homeagentctl webui credentials`), and made new on request
 * (`--reset password|api_key`). Only homeagentctl on the control socket may call it: whoever can
 * use that socket is the machine's admin already, while a logged-in page or an API-key program
 * must not be able to read or replace the secrets that let it in.
 */
import { Type } from '@sinclair/typebox';
import type { WebuiCredentials } from '../../src/sdk/api.js';
import { HomeAgentError, isHomeAgentError, type PluginContext } from '../../src/sdk/index.js';
import type { CredentialKind, CredentialStore } from './credentials.js';
import type { SessionStore } from './sessions.js';

/** The one caller `webui.credentials` answers. */
const CREDENTIALS_CALLER = 'cli';

export interface WebuiMethodsDeps {
  ctx: PluginContext;
  credentials: CredentialStore;
  sessions: SessionStore;
  /** The page's address, once the server listens. */
  url: () => string | undefined;
}

export function registerWebuiMethods(deps: WebuiMethodsDeps): void {
  try {
    deps.ctx.control.register({
      name: 'webui.credentials',
      description:
        "The web page's address, admin password and API key; reset: 'password' or 'api_key' makes a new one (answers homeagentctl only).",
      params: Type.Object(
        { reset: Type.Optional(Type.Union([Type.Literal('password'), Type.Literal('api_key')])) },
        { additionalProperties: false },
      ),
      handler: (params, caller) => credentialsFor(deps, caller.actor, params.reset),
    });
  } catch (error) {
    // The server works without it; only `homeagentctl webui credentials` is missing.
    if (!isHomeAgentError(error, 'HA_ERR_UNAVAILABLE')) throw error;
    deps.ctx.log.warn(
      { err: error },
      'webui.credentials is not available in this daemon: `homeagentctl webui credentials` will not answer',
    );
  }
}

function credentialsFor(deps: WebuiMethodsDeps, actor: string, reset: CredentialKind | undefined): WebuiCredentials {
  if (actor !== CREDENTIALS_CALLER) {
    throw new HomeAgentError(
      'HA_ERR_PLUGIN_PERMISSION',
      `webui.credentials answers only homeagentctl on the control socket, not ${JSON.stringify(actor)}`,
    );
  }
  const url = deps.url();
  if (url === undefined) throw new HomeAgentError('HA_ERR_PLUGIN_STATE', 'the web server is not serving');
  let credentials = deps.credentials.current();
  if (reset !== undefined) {
    credentials = deps.credentials.reset(reset);
    // A new password ends every login made with the old one.
    const ended = reset === 'password' ? deps.sessions.endAll() : 0;
    deps.ctx.audit('webui.credentials.reset', { on_behalf_of: actor, which: reset, sessions_ended: ended });
  } else {
    deps.ctx.audit('webui.credentials.read', { on_behalf_of: actor });
  }
  return { url, password: credentials.password, api_key: credentials.api_key, created_at: credentials.created_at };
}
