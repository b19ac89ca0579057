// Moved to src/contract (the wire contract shared with the console); kept so the tools' imports stay put.
export * from '../../contract/kb-schemas.ts';
