// Moved to src/contract (the console imports the same names); kept so the server's imports stay put.
export * from '../contract/actions.ts';
