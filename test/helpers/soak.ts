/**
 * How many times a repeated reliability check runs. The main suite (`npm test`) runs each often
 * enough to fail on a real defect and stays inside CI's time budget; the soak (`npm run test:soak`,
 * HA_SOAK=1, run by .ci/run after the main suite) runs the counts of
 * ../shared/reference/reliability-and-performance.md (1,000 SIGKILLs of the settings store, 100 bad
 * plugins, 100 kills during a trial). A variable of the test's own overrides both, to repeat or
 * shorten one run.
 */
export function soakCount(variable: string, quick: number, soak: number): number {
  const own = process.env[variable];
  if (own !== undefined && own !== '') {
    const n = Number(own);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${variable} must be a whole number of at least 1, not ${JSON.stringify(own)}`);
    return n;
  }
  return process.env.HA_SOAK === '1' ? soak : quick;
}
