import type { BuildOptions } from 'esbuild';

export declare const EXTERNAL: string[];
export declare const SUPPORTED: Record<string, boolean>;
export declare const ESM_BUNDLE: BuildOptions;
