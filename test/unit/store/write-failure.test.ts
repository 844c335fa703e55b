/** Which failed writes get which code, and what passes through unchanged. */
import t from 'tap';
import { HomeAgentError } from '../../../src/shared/errors.js';
import { isDiskFull, mapWriteFailure, writeFailure } from '../../../src/store/write-failure.js';

const failed = (code: string, message = 'boom') => Object.assign(new Error(message), { code });

t.test('a full disk, from SQLite or the file system, is HA_ERR_STORE_FULL naming what was written', async (t) => {
  for (const code of ['SQLITE_FULL', 'ENOSPC', 'EDQUOT']) {
    const error = writeFailure(failed(code), 'the knowledge entry a/b');
    t.match(error, { code: 'HA_ERR_STORE_FULL', details: { what: 'the knowledge entry a/b', cause_code: code } }, code);
    t.match(error?.message, /^the disk is full: the knowledge entry a\/b could not be written, nothing of this change was kept/);
    t.ok(isDiskFull(failed(code)));
  }
  t.ok(isDiskFull(new HomeAgentError('HA_ERR_STORE_FULL')), 'an already coded one is still a full disk');
});

t.test('a refused write is HA_ERR_STORE_WRITE saying why', async (t) => {
  t.match(writeFailure(failed('SQLITE_READONLY'), 'x'), { code: 'HA_ERR_STORE_WRITE', message: /x could not be written, it is read-only/ });
  t.match(writeFailure(failed('EROFS'), 'x'), { code: 'HA_ERR_STORE_WRITE', message: /it is read-only/ });
  t.match(writeFailure(failed('SQLITE_IOERR_WRITE'), 'x'), { code: 'HA_ERR_STORE_WRITE', message: /the disk reported an error/ });
  t.match(writeFailure(failed('EIO'), 'x'), { code: 'HA_ERR_STORE_WRITE' });
});

t.test('anything else passes unchanged: constraints, missing files, errors already coded', async (t) => {
  for (const error of [
    failed('SQLITE_CONSTRAINT_UNIQUE'),
    failed('ENOENT'),
    new Error('no code'),
    new HomeAgentError('HA_ERR_STORE_WRITE'),
  ]) {
    t.equal(writeFailure(error, 'x'), undefined);
    t.equal(
      t.throws(() =>
        mapWriteFailure('x', () => {
          throw error;
        }),
      ),
      error,
      'rethrown as it is',
    );
  }
  t.equal(
    mapWriteFailure('x', () => 42),
    42,
  );
});
