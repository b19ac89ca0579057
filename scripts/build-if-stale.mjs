// `npm test`'s pretest: runs `npm run build` (scripts/build.mjs) unless dist/ was built from exactly
// the files that are there now (the stamp of scripts/build-stamp.mjs), so the tests that run the
// compiled build always get a fresh one and an unchanged checkout does not pay for a rebuild.
// FORCE_BUILD=1 rebuilds regardless.
import { staleReason, stampedInputCount } from './build-stamp.mjs';

const reason = process.env.FORCE_BUILD === '1' ? 'FORCE_BUILD=1' : staleReason();
if (reason === null) {
  console.log(`dist/ is up to date (${stampedInputCount()} inputs unchanged): build skipped`);
} else {
  console.log(`building dist/: ${reason}`);
  await import('./build.mjs');
}
