// Preloaded with --import: makes the embedded engine (npm chdb) unresolvable, as on a server-mode image
// or a platform chdb has no build for. Anything that imports chdb fails with ERR_MODULE_NOT_FOUND.
import { register } from 'node:module';

const hook = `
export async function resolve(specifier, context, next) {
  if (specifier === 'chdb' || specifier.startsWith('chdb/')) {
    const err = new Error("Cannot find package 'chdb' (hidden by test/support/hide-chdb.mjs)");
    err.code = 'ERR_MODULE_NOT_FOUND';
    throw err;
  }
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
