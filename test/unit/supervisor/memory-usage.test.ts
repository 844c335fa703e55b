import t from 'tap';
import { cgroupMemoryLimit, parseLimit, readMemoryUsage } from '../../../src/supervisor/memory-usage.js';

/** A file system of a few files; every other path is missing. */
function files(map: Record<string, string>): (path: string) => string | undefined {
  return (path) => map[path];
}

t.test('parseLimit: bytes, or null for max, empty and the v1 "unlimited" value', async (t) => {
  t.equal(parseLimit('629145600\n'), 629145600);
  t.equal(parseLimit('max\n'), null);
  t.equal(parseLimit(''), null);
  t.equal(parseLimit('9223372036854771712\n'), null, 'cgroup v1 writes no limit as a page-rounded 2^63');
  t.equal(parseLimit('garbage'), null);
});

t.test('cgroup v2: the service cgroup from /proc/self/cgroup wins over the namespace root', async (t) => {
  const read = files({
    '/proc/self/cgroup': '0::/system.slice/homeagent.service\n',
    '/sys/fs/cgroup/system.slice/homeagent.service/memory.max': '629145600\n',
    '/sys/fs/cgroup/memory.max': '1073741824\n',
  });
  t.equal(cgroupMemoryLimit(read), 600 * 1024 * 1024, 'MemoryMax=600M of the unit');
});

t.test('cgroup v2 in a container: the namespace root holds the limit', async (t) => {
  const read = files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/memory.max': '268435456\n' });
  t.equal(cgroupMemoryLimit(read), 256 * 1024 * 1024);
  t.equal(cgroupMemoryLimit(files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/memory.max': 'max\n' })), null, 'max means none');
});

t.test('cgroup v1: memory.limit_in_bytes of the memory hierarchy', async (t) => {
  const read = files({
    '/proc/self/cgroup': '12:pids:/x\n4:memory:/system.slice/homeagent.service\n0::/\n',
    '/sys/fs/cgroup/memory/system.slice/homeagent.service/memory.limit_in_bytes': '536870912\n',
  });
  t.equal(cgroupMemoryLimit(read), 512 * 1024 * 1024);
  const unlimited = files({
    '/proc/self/cgroup': '4:cpu,memory:/\n',
    '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712',
  });
  t.equal(cgroupMemoryLimit(unlimited), null);
});

t.test('nothing readable: no limit', async (t) => {
  t.equal(cgroupMemoryLimit(files({})), null);
});

t.test('readMemoryUsage reports this process', async (t) => {
  const usage = readMemoryUsage(files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/memory.max': '1048576000' }));
  t.ok(usage.rss_bytes > 1024 * 1024, 'a real resident size');
  t.equal(usage.cgroup_limit_bytes, 1048576000);
});
