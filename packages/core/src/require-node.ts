// Imported first by every entry point (the API, the worker, the dispatcher, the CLI, the
// migrations): on an older Node the process stops here with one line naming the release it
// needs, before any module that might fail on a missing API or print a dependency's warning.
import { unsupportedNodeReason } from './node-runtime';

const reason = unsupportedNodeReason(process.versions.node);
if (reason) {
  process.stderr.write(`${reason}\n`);
  process.exit(1);
}
