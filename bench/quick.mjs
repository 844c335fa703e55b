/**
 * Quick mode (`npm run bench -- --quick`, or BENCH_QUICK=1): every benchmark runs its real code
 * path with few iterations and small data, so CI can run all of them on every change and none can
 * rot unnoticed. Its figures are not measurements: run.mjs marks each line `quick: true` and
 * leaves goals unjudged (`goal_met: null`).
 */
export const quick = process.env.BENCH_QUICK === '1';

/** `full` normally, `small` in quick mode. */
export const size = (full, small) => (quick ? small : full);
