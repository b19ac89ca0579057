// Moved to src/contract (the console's Evaluate page computes the same formulas); kept so importers stay put.
export * from '../../contract/metrics.ts';
