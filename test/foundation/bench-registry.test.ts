/**
 * Benchmarks as one registry (scripts/bench/registry.ts): every bench file is listed, every listed
 * file exists, and every benchmark has its `npm run bench:<name>` script (a script missing from
 * package.json made a registered benchmark impossible to run by the README's command).
 */
import t from 'tap';
import { registryProblems } from '../../scripts/bench/registry.ts';

t.same(registryProblems(), [], 'the registry, the bench files and the bench:* scripts agree');
