// tap loads @tapjs/processinfo into every test process (for coverage and `tap --changed`, neither
// used here: coverage is disabled), and through process-on-spawn it adds itself to the
// NODE_OPTIONS of every child process a test starts, even one given its own environment: every
// server, stdio server and extraction child then runs an extra loader thread that records each
// module it loads, which made a compiled server's start cost about 2.7 s of CPU instead of 1 s.
// Children are started here as users start them: without it (test/setup/early.cjs removes it from
// the inherited NODE_OPTIONS). process-on-spawn keeps its state on this global symbol; when a
// later tap no longer has it, nothing changes.
const state = globalThis[Symbol.for('process-on-spawn@*:singletonId')];
if (state && Array.isArray(state.listeners)) state.listeners = [];
