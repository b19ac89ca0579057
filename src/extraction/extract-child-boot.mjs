// Entry of an extraction child run from the TypeScript sources. A forked child gets an explicit,
// minimal execArgv (no inherited loaders), so tsx is registered here, for the whole process: test
// extractor modules loaded later are TypeScript too.
import { register } from 'tsx/esm/api';

register();
await import('./extract-child.ts');
