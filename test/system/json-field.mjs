#!/usr/bin/env node
/**
 * Prints one field of the JSON document on stdin (the guest has no jq): a dotted path with
 * numeric array indexes, e.g. `homeagentctl --json entities get X | node json-field.mjs entity.state`.
 * Objects and arrays are printed as JSON, strings as they are; a missing field exits 1.
 */
let text = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) text += chunk;
let value = JSON.parse(text);
for (const key of (process.argv[2] ?? '').split('.').filter(Boolean)) {
  value = value?.[key];
}
if (value === undefined) process.exit(1);
console.log(typeof value === 'string' ? value : JSON.stringify(value));
