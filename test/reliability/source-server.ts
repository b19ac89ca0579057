/** The server from src/ through tsx, for `--source` runs: no build needed while the code changes. */
import { main } from '../../src/server.ts';

await main(process.argv.slice(2));
