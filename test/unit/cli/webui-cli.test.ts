// `homeagentctl webui credentials` (src/cli/webui.ts): argument parsing and readable output.
import t from 'tap';
import { formatCredentials, parseWebuiCommand, WebuiUsageError } from '../../../src/cli/webui.js';

t.test('parseWebuiCommand reads credentials and --reset, and refuses what does not fit', async (t) => {
  t.same(parseWebuiCommand(['credentials'], {}), { command: 'credentials' });
  t.same(parseWebuiCommand(['credentials'], { reset: 'api_key' }), { command: 'credentials', reset: 'api_key' });
  t.same(parseWebuiCommand(['credentials'], { reset: 'password' }), { command: 'credentials', reset: 'password' });
  const refused: Array<[string[], { reset?: string }, RegExp]> = [
    [[], {}, /webui needs a command: webui credentials$/],
    [['password'], {}, /unknown webui command password/],
    [['credentials', 'x'], {}, /takes no arguments/],
    [['credentials'], { reset: 'token' }, /--reset must be password or api_key, not "token"/],
  ];
  for (const [args, flags, message] of refused) {
    const error = (() => {
      try {
        parseWebuiCommand(args, flags);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    t.ok(error instanceof WebuiUsageError, `${args.join(' ')}: a usage error`);
    t.match(String(error), message);
  }
});

t.test('formatCredentials names the address, both secrets and says when one was replaced', async (t) => {
  const answer = { url: 'http://127.0.0.1:8080/', password: 'pw-123', api_key: 'key-456', created_at: '2026-11-30T00:00:00.000Z' };
  const text = formatCredentials(answer);
  t.match(text, /web page: http:\/\/127\.0\.0\.1:8080\//);
  t.match(text, /password: pw-123/);
  t.match(text, /API key: +key-456/);
  t.match(text, /OpenAI endpoint http:\/\/127\.0\.0\.1:8080\/v1/);
  t.notMatch(text, /new /);
  t.match(formatCredentials(answer, 'api_key'), /^new API key made; the old one no longer works/);
});
