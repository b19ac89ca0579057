/**
 * Downloads the ONNX models' files from the Hugging Face hub into MODELS_DIR (default
 * data/models), in the layout the server reads:
 *
 *   npm run models:fetch                       # all three, quantized weights
 *   npm run models:fetch -- --only fast,reranker --dtype fp32 --models-dir /srv/models
 *
 * For machines (or Docker builds) with internet access; files already present are kept.
 */
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../src/config.ts';
import { MODEL_SPECS, type ModelRole, type WeightDtype } from '../src/retrieval/embedders/model-paths.ts';
import { HUB_URL, downloadMissing, planDownloads, type DownloadItem } from '../src/retrieval/models/hub-download.ts';

export interface FetchArgs {
  modelsDir: string;
  roles: ModelRole[];
  dtype: WeightDtype;
  hubUrl: string;
}

export function parseFetchArgs(argv: string[], defaultModelsDir: string): FetchArgs {
  const args: FetchArgs = { modelsDir: defaultModelsDir, roles: ['fast', 'accurate', 'reranker'], dtype: 'q8', hubUrl: HUB_URL };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === '--models-dir') args.modelsDir = value();
    else if (flag === '--dtype') {
      const d = value();
      if (d !== 'q8' && d !== 'fp32') throw new Error(`--dtype must be q8 or fp32, got ${d}`);
      args.dtype = d;
    } else if (flag === '--only') {
      const roles = value().split(',').map((r) => r.trim()).filter(Boolean);
      for (const r of roles) if (!(r in MODEL_SPECS)) throw new Error(`--only takes fast, accurate, reranker; got ${r}`);
      args.roles = roles as ModelRole[];
    } else if (flag === '--hub') args.hubUrl = value();
    else throw new Error(`unknown option ${flag} (options: --models-dir DIR, --only fast,accurate,reranker, --dtype q8|fp32, --hub URL)`);
  }
  return args;
}

export function planFetch(args: FetchArgs): DownloadItem[] {
  return planDownloads(args.modelsDir, args.roles.map((r) => MODEL_SPECS[r]), { hubUrl: args.hubUrl, dtype: args.dtype });
}

async function main(): Promise<void> {
  const config = loadConfig();
  const args = parseFetchArgs(process.argv.slice(2), config.modelsDir);
  const items = planFetch(args);
  process.stderr.write(`fetching ${args.roles.join(', ')} (${args.dtype}) from ${args.hubUrl} into ${args.modelsDir}\n`);
  let last = 0;
  const { fetched, present } = await downloadMissing(items, {
    onProgress: (item, bytes) => {
      if (Date.now() - last < 2000) return;
      last = Date.now();
      process.stderr.write(`  ${item.repo}/${item.file}: ${(bytes / 1e6).toFixed(1)} MB\n`);
    },
  });
  for (const f of fetched) process.stderr.write(`  fetched ${f.repo}/${f.file}\n`);
  for (const f of present) process.stderr.write(`  kept    ${f.repo}/${f.file}\n`);
  process.stderr.write('done\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`models:fetch failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
