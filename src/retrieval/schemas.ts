// Moved to src/contract (the wire contract shared with the console); kept so importers stay put.
export * from '../contract/retrieval-schemas.ts';
