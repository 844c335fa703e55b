#!/usr/bin/env node
/**
 * Calls one control method of the installed daemon, for what homeagentctl has no command for
 * (debug.block_event_loop, registered when core.supervisor.debug_methods is true). Runs in the
 * guest with the package's own RPC client. Prints the result as JSON; exits 1 on an error.
 *
 * Usage: node rpc-call.mjs METHOD [PARAMS_JSON] [SOCKET]
 */
const { RpcClient } = await import('/opt/homeagent/dist/src/cli/rpc-client.js');

const [method, params = '{}', socket = '/run/homeagent/homeagent.sock'] = process.argv.slice(2);
if (!method) {
  console.error('usage: rpc-call.mjs METHOD [PARAMS_JSON] [SOCKET]');
  process.exit(2);
}
const client = await RpcClient.connect(socket, 10_000);
try {
  console.log(JSON.stringify(await client.call(method, JSON.parse(params))));
} catch (error) {
  console.error(`${method}: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  client.close();
}
