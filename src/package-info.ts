/** Name, version and description of this server, read once from package.json. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './project-root.ts';

const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  description: string;
};

export const PACKAGE_INFO: Readonly<{ name: string; version: string; description: string }> = Object.freeze({
  name: pkg.name,
  version: pkg.version,
  description: pkg.description,
});
