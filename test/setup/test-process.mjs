// Loaded by every test process (tap's node-arg in package.json, after test/setup/ts-loader.mjs). Each file says why.
import './bundled-typebox.mjs';
import './plain-children.mjs';

// Extraction children forked from the sources load the same two loaders instead of tsx
// (src/extraction/extract-child-boot.mjs says why).
process.env.RAG_EXTRACT_CHILD_IMPORTS = [import.meta.resolve('./ts-loader.mjs'), import.meta.resolve('./bundled-typebox.mjs')].join(' ');
