#!/usr/bin/env node
/**
 * homeagentctl: the command line for a running HomeAgent, over its Unix socket. This file is only
 * the binary: it runs the process's arguments (src/cli/run-homeagentctl.ts) and exits with the code.
 */
import { describeError } from '../shared/errors.js';
import { EXIT_CODES } from '../shared/exit-codes.js';
import { runHomeagentctl } from './run-homeagentctl.js';

runHomeagentctl(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`homeagentctl: ${describeError(error)}\n`);
    process.exitCode = EXIT_CODES.FAILURE;
  },
);
