import t from 'tap';
import { LineDecoder } from '../../../src/shared/line-decoder.js';

t.test('splits lines across chunks', async (t) => {
  const d = new LineDecoder(100);
  t.same(d.push(Buffer.from('ab')), []);
  t.same(d.push(Buffer.from('c\nde\n')), [
    { kind: 'line', text: 'abc' },
    { kind: 'line', text: 'de' },
  ]);
});

t.test('empty lines and a line of exactly the limit are lines', async (t) => {
  const d = new LineDecoder(5);
  t.same(d.push(Buffer.from('\n12345\n')), [
    { kind: 'line', text: '' },
    { kind: 'line', text: '12345' },
  ]);
  t.equal(d.discarding, false);
});

t.test('an oversize frame is reported once, as soon as it passes the limit', async (t) => {
  const d = new LineDecoder(10);
  t.same(d.push(Buffer.from('abcdefgh')), [], 'below the limit: nothing yet');
  t.same(d.push(Buffer.from('ijkl')), [{ kind: 'too_large', bytes: 12 }], 'reported before the newline arrives');
  t.equal(d.discarding, true);
  t.same(d.push(Buffer.from('x'.repeat(100))), [], 'the rest of the line is skipped without a second report');
  t.same(d.push(Buffer.from('yyyy')), []);
  t.same(d.push(Buffer.from('zz\nnext\n')), [{ kind: 'line', text: 'next' }], 'the line after the newline decodes normally');
  t.equal(d.discarding, false);
  t.same(d.push(Buffer.from('after\n')), [{ kind: 'line', text: 'after' }]);
});

t.test('an oversize line and normal lines in one chunk', async (t) => {
  const d = new LineDecoder(4);
  t.same(d.push(Buffer.from('ok\ntoolongline\nfine\n')), [
    { kind: 'line', text: 'ok' },
    { kind: 'too_large', bytes: 11 },
    { kind: 'line', text: 'fine' },
  ]);
});

t.test('the newline that ends an oversize line is not counted as the start of a new frame', async (t) => {
  const d = new LineDecoder(3);
  t.same(d.push(Buffer.from('abcd')), [{ kind: 'too_large', bytes: 4 }]);
  t.same(d.push(Buffer.from('\n')), []);
  t.same(d.push(Buffer.from('\n')), [{ kind: 'line', text: '' }]);
});

t.test('multi-byte UTF-8 split across chunks decodes correctly', async (t) => {
  const d = new LineDecoder(100);
  const bytes = Buffer.from('€ 你好\n', 'utf8');
  // Split inside the euro sign (3 bytes) and inside 你 (3 bytes).
  t.same(d.push(bytes.subarray(0, 1)), []);
  t.same(d.push(bytes.subarray(1, 5)), []);
  t.same(d.push(bytes.subarray(5)), [{ kind: 'line', text: '€ 你好' }]);

  // One byte at a time.
  const frames = [...Buffer.from('héllo wörld 🙂\n', 'utf8')].flatMap((b) => d.push(Buffer.from([b])));
  t.same(frames, [{ kind: 'line', text: 'héllo wörld 🙂' }]);
});

t.test('the limit is counted in bytes, not characters', async (t) => {
  const d = new LineDecoder(6);
  t.same(d.push(Buffer.from('你好\n')), [{ kind: 'line', text: '你好' }], '6 bytes fit');
  t.same(d.push(Buffer.from('你好!')), [{ kind: 'too_large', bytes: 7 }], '7 bytes do not');
});

t.test('a changed limit applies to the next chunk', async (t) => {
  let limit = 100;
  const d = new LineDecoder(() => limit);
  t.same(d.push(Buffer.from('0123456789\n')), [{ kind: 'line', text: '0123456789' }]);
  limit = 5;
  t.same(d.push(Buffer.from('0123456789\n')), [{ kind: 'too_large', bytes: 10 }]);
});
