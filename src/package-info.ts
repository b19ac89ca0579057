/** Name, version and description of this server, read once from package.json. */
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  name: string;
  version: string;
  description: string;
};

export const PACKAGE_INFO: Readonly<{ name: string; version: string; description: string }> = Object.freeze({
  name: pkg.name,
  version: pkg.version,
  description: pkg.description,
});
