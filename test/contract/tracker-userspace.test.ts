import { join } from 'node:path';
import t from 'tap';
import { UserspaceTracker } from '../../src/tracker/userspace-tracker.js';
import { trackerBackendContract } from './tracker-backend.contract.js';

// The copy-based back end: the tree under <dir>/plugins, its good copy and journal under <dir>/state.
trackerBackendContract(
  t,
  'UserspaceTracker',
  async (dir, options) =>
    new UserspaceTracker({
      root: join(dir, 'plugins'),
      stateDir: join(dir, 'state'),
      ...(options?.faultAfter === undefined ? {} : { faultAfter: options.faultAfter }),
    }),
);
