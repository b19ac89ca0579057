/**
 * Child process for peak-memory numbers: loads one extractor, reads one file, extracts it once and
 * prints {rss_after_load_mb, peak_rss_mb (sampled every 5 ms during the extraction), chars, units}
 * as JSON. A fresh process per measurement
 * keeps one library's heap from counting against another.
 *
 *   npx tsx scripts/bench/rss-probe.ts <format> <ours|baseline> <file>
 */
import fs from 'node:fs';
import path from 'node:path';
import { baselineFor, closeImpls, oursFor, type Format } from './extract-impls.ts';
import { withPeakRss } from './harness.ts';

const [format, impl, file] = process.argv.slice(2) as [Format, 'ours' | 'baseline', string];
const fn = impl === 'ours' ? await oursFor(format) : await baselineFor(format);
const bytes = fs.readFileSync(file);
(globalThis as { gc?: () => void }).gc?.();
const before = process.memoryUsage.rss();
// Sampled during the extraction only: process-wide maxRSS would report the peak of loading the
// TypeScript sources instead.
const { value: out, peakMb } = await withPeakRss(() => fn(bytes, path.basename(file)));
const peak = peakMb * 1048576;
await closeImpls();
process.stdout.write(
  JSON.stringify({ rss_after_load_mb: before / 1048576, peak_rss_mb: peak / 1048576, chars: out.chars, units: out.units }) + '\n',
);
process.exit(0);
