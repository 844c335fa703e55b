/** The late links of the composition: coded errors before binding and on a second binding. */
import t from 'tap';
import { LateBinding } from '../../../src/daemon/late-binding.js';
import { expectError } from '../fixtures/support.js';

t.test('use before bind is HA_ERR_DAEMON_WIRING naming the part', async (t) => {
  const binding = new LateBinding<() => number>('the input scheduler');
  const error = expectError(t, () => binding.get(), 'HA_ERR_DAEMON_WIRING');
  t.match(error.message, 'the input scheduler was used before it was composed');
});

t.test('bound once it answers the value; a second bind is refused and keeps the first', async (t) => {
  const binding = new LateBinding<{ n: number }>('the plugin host');
  const first = { n: 1 };
  binding.bind(first);
  t.equal(binding.get(), first);
  expectError(t, () => binding.bind({ n: 2 }), 'HA_ERR_DAEMON_WIRING');
  t.equal(binding.get(), first);
});
