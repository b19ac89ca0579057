// Preloaded into every test process with --require (tap's node-arg in package.json), which Node
// runs before any --import, so before tap's own preloads. tap always loads @tapjs/processinfo into
// test processes (for coverage and `tap --changed`, neither used here: coverage is disabled), and
// it records every module the process loads: it reads each source again, splits it into lines and,
// at exit, parses every inline source map. That was about 0.8 s of CPU per test file. A pattern
// matching every file, set before its loader thread starts, leaves it nothing to record.
process.env._TAPJS_PROCESSINFO_EXCLUDE_ = '/./';
// The same loader is also in NODE_OPTIONS, which every child process would inherit (servers,
// stdio servers, extraction children): children start as users start them, without it
// (test/setup/plain-children.mjs removes its other route, the spawn hook).
if (process.env.NODE_OPTIONS) {
  const kept = process.env.NODE_OPTIONS.split(/\s+/).filter((o) => o && !o.includes('@tapjs/processinfo'));
  if (kept.length) process.env.NODE_OPTIONS = kept.join(' ');
  else delete process.env.NODE_OPTIONS;
}
